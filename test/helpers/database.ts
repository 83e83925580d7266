// A fresh, migrated database per test file: a clone of a migrated PGlite template, or, when DATABASE_URL is set,
// a throwaway PostgreSQL database created beside the one it names and dropped afterwards.
import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import pg from 'pg'
import { inject } from 'vitest'
import { loadConfig } from '../../src/config.ts'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts'
import { migrateDatabase } from '../../src/db/migrate.ts'

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
  const name = `anchor_test_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
  await admin.query(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(adminUrl)
  url.pathname = `/${name}`
  const handle = await openDatabase({ url: url.toString() })
  await migrateDatabase(handle)
  return {
    handle,
    url: url.toString(),
    async close() {
      await handle.close()
      const cleanup = new pg.Client({ connectionString: adminUrl })
      await cleanup.connect()
      await cleanup.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await cleanup.end()
    },
  }
}
