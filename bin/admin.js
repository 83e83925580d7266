#!/usr/bin/env node
// `npm run admin`: the operator's command from its precompiled build in dist/admin/ while it matches the sources, else the
// sources through tsx (see src/precompiled-builds.js).
import { PRECOMPILED_TARGETS, runPrecompiledOrSources } from '../src/precompiled-builds.js'

await runPrecompiledOrSources(PRECOMPILED_TARGETS.admin)
