// Once per test run: the migrated PGlite template (src/db/pglite-template.ts, the archive a new data directory of the
// service starts from), so each test file clones it instead of paying for initdb and migrations again (~2 s against
// ~5 s or more per file on two cores); and the precompiled builds (src/precompiled-builds.js: the entry points, the
// verification page), rebuilt if a source changed since `npm install` built them, so that the tests running
// packages/cli/bin/anchor.js and bin/server.js run what a fresh clone runs, and no test file rebuilds them while
// another runs them; and the other node implementations the relay is tested against (tools/test-nodes), installed
// from their lock.
import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { TestProject } from 'vitest/node'
import { ensurePgliteTemplate } from '../src/db/pglite-template.ts'
import { staleBuilds } from '../src/precompiled-builds.js'
import { ensureTestNodes } from './helpers/chain/other-nodes.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplatePath: string
  }
}

/** Rebuilds only the stale targets: the browser project's global setup may be starting bin/server.js meanwhile. */
async function ensurePrecompiledBuilds(): Promise<void> {
  const stale = staleBuilds(ROOT)
  if (stale.length === 0) return
  await promisify(execFile)(process.execPath, ['--import', 'tsx', 'scripts/precompile.ts', ...stale], { cwd: ROOT })
}

export default async function setup(project: TestProject): Promise<void> {
  const [pgliteTemplatePath] = await Promise.all([ensurePgliteTemplate(), ensurePrecompiledBuilds(), ensureTestNodes()])
  project.provide('pgliteTemplatePath', pgliteTemplatePath)
}
