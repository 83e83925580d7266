// Once per test run: migrate one PGlite database and dump it, so each test file clones it instead of paying for
// initdb and migrations again (~2 s against ~5 s or more per file on two cores).
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    pgliteTemplatePath: string
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = await mkdtemp(join(tmpdir(), 'anchor-pglite-template-'))
  const handle = await openDatabase({})
  await migrateDatabase(handle)
  if (handle.kind !== 'pglite') throw new Error('expected PGlite')
  const dump = await handle.pglite.dumpDataDir('none')
  await handle.close()
  const path = join(dir, 'template.tar')
  await writeFile(path, Buffer.from(await dump.arrayBuffer()))
  project.provide('pgliteTemplatePath', path)
  return () => rm(dir, { recursive: true, force: true })
}
