// A fresh, migrated database per test file: a clone of a migrated PGlite template, or, when DATABASE_URL is set,
// a throwaway PostgreSQL database created beside the one it names and dropped afterwards.
import { readFile } from 'node:fs/promises'
import { inject } from 'vitest'
import { loadConfig } from '../../../src/config/load-config.ts'
import { type DatabaseHandle, openDatabase } from '../../../src/db/database.ts'
import { migrateDatabase } from '../../../src/db/migrate.ts'
import { createThrowawayDatabase } from './throwaway-postgres.ts'

export interface TestDatabase {
  handle: DatabaseHandle
  /** Connection string of the throwaway PostgreSQL database; undefined on PGlite. */
  url: string | undefined
  close(): Promise<void>
}

/** The PostgreSQL server the tests run against, from DATABASE_URL; undefined means PGlite. */
export const testPostgresUrl = loadConfig(process.env).database.url

let pgliteTemplate: Promise<Blob> | undefined

export async function createTestDatabase(): Promise<TestDatabase> {
  if (testPostgresUrl !== undefined) return createPostgresDatabase(testPostgresUrl)
  // The migrated template dumped once per run by test/global-setup.ts.
  pgliteTemplate ??= readFile(inject('pgliteTemplatePath')).then((bytes) => new Blob([bytes]))
  const handle = await openDatabase({ pgliteTemplate: await pgliteTemplate })
  return { handle, url: undefined, close: () => handle.close() }
}

async function createPostgresDatabase(adminUrl: string): Promise<TestDatabase> {
  const throwaway = await createThrowawayDatabase(adminUrl)
  const handle = await openDatabase({ url: throwaway.url })
  await migrateDatabase(handle)
  return {
    handle,
    url: throwaway.url,
    async close() {
      await handle.close()
      await throwaway.drop()
    },
  }
}
