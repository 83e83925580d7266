#!/usr/bin/env node
// `npm run deploy`: the operator's command from its precompiled build in dist/deploy/ while it matches the sources, else the
// sources through tsx (see src/precompiled-builds.js).
import { PRECOMPILED_TARGETS, runPrecompiledOrSources } from '../src/precompiled-builds.js'

await runPrecompiledOrSources(PRECOMPILED_TARGETS.deploy)
