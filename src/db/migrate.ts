import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { sql } from 'drizzle-orm'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import type { DatabaseHandle, Schema } from './database.ts'

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url))
/**
 * The current text of each PL/pgSQL function, one file each (`CREATE OR REPLACE FUNCTION`), applied after every
 * migration run: a function is read and changed there alone. The migrations that first created or replaced one keep
 * the text of their day; a migration is needed only to change a function's signature (drop it, and its file creates it).
 */
export const FUNCTIONS_FOLDER = fileURLToPath(new URL('../../drizzle/functions', import.meta.url))

/**
 * Applies every pending migration from `drizzle/`, then the functions of `drizzle/functions/`; safe to run from
 * several processes at once.
 */
export async function migrateDatabase(handle: DatabaseHandle): Promise<void> {
  await handle.withMigrationLock(async () => {
    // The migrator of the driver in use only (see database.ts).
    if (handle.kind === 'postgres') {
      const { migrate: migrateNodePg } = await import('drizzle-orm/node-postgres/migrator')
      await migrateNodePg(handle.db as unknown as NodePgDatabase<Schema>, { migrationsFolder: MIGRATIONS_FOLDER })
    } else {
      const { migrate: migratePglite } = await import('drizzle-orm/pglite/migrator')
      await migratePglite(handle.db as unknown as PgliteDatabase<Schema>, { migrationsFolder: MIGRATIONS_FOLDER })
    }
    for (const text of await functionTexts()) await handle.db.execute(sql.raw(text))
  })
}

/** Each function's file, by name. */
export async function functionTexts(): Promise<string[]> {
  const names = (await readdir(FUNCTIONS_FOLDER)).filter((name) => name.endsWith('.sql')).sort()
  return Promise.all(names.map((name) => readFile(`${FUNCTIONS_FOLDER}/${name}`, 'utf8')))
}
