// Once per test run: the migrated PGlite template (src/db/pglite-template.ts, the archive a new data directory of the
// service starts from), so each test file clones it instead of paying for initdb and migrations again (~2 s against
// ~5 s or more per file on two cores).
import type { TestProject } from 'vitest/node'
import { ensurePgliteTemplate } from '../src/db/pglite-template.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplatePath: string
  }
}

export default async function setup(project: TestProject): Promise<void> {
  project.provide('pgliteTemplatePath', await ensurePgliteTemplate())
}
