#!/usr/bin/env node
// The `anchor` command from a checkout: the precompiled build in dist/cli/ (made by `npm install`) while it matches
// the sources, else the sources through tsx (see precompiled.js).
import { PRECOMPILED_TARGETS, runPrecompiledOrSources } from './precompiled.js'

await runPrecompiledOrSources(PRECOMPILED_TARGETS.cli)
