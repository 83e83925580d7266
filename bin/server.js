#!/usr/bin/env node
// The service from a checkout (`npm start`): the precompiled build in dist/server/ (made by `npm install`) while it
// matches the sources, else the sources through tsx (see src/precompiled-builds.js).
import { PRECOMPILED_TARGETS, runPrecompiledOrSources } from '../src/precompiled-builds.js'

await runPrecompiledOrSources(PRECOMPILED_TARGETS.server)
