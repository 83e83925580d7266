#!/usr/bin/env node
// The `anchor` command from a checkout. Runs the precompiled build in dist/cli/ (made by `npm install`) while it
// matches the sources; otherwise registers tsx's loader and the `@docanchor/source` condition (so @docanchor/client
// resolves to its TypeScript sources) and runs the sources themselves.
import { fileURLToPath } from 'node:url'
import { CLI_BUILD_DIR, precompiledCliIsFresh } from './precompiled-cli.js'

const root = fileURLToPath(new URL('..', import.meta.url))
if (precompiledCliIsFresh(root)) {
  await import(new URL(`../${CLI_BUILD_DIR}/anchor.js`, import.meta.url).href)
} else {
  const [{ register: registerHooks }, { register }] = await Promise.all([import('node:module'), import('tsx/esm/api')])
  register()
  registerHooks('./source-condition.js', import.meta.url)
  await import('../src/cli/anchor.ts')
}
