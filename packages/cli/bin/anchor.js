#!/usr/bin/env node
// The `anchor` command. Installed from its package, it runs dist/ (the sources bundled by `npm pack`,
// scripts/bundle-cli-package.ts at the repository's root). In the repository, where the package is its sources and
// never has a dist/, it runs the checkout's precompiled build while that matches the sources, else the sources through
// tsx (src/precompiled-builds.js at the repository's root).
import { existsSync } from 'node:fs'

if (existsSync(new URL('../src/anchor.ts', import.meta.url))) {
  const { PRECOMPILED_TARGETS, runPrecompiledOrSources } = await import('../../../src/precompiled-builds.js')
  await runPrecompiledOrSources(PRECOMPILED_TARGETS.cli)
} else {
  await import('../dist/anchor.js')
}
