import { fileURLToPath } from 'node:url'
import type { NodePgDatabase } from 'drizzle-orm/node-postgres'
import type { PgliteDatabase } from 'drizzle-orm/pglite'
import type { DatabaseHandle, Schema } from './database.ts'

export const MIGRATIONS_FOLDER = fileURLToPath(new URL('../../drizzle', import.meta.url))

/** Applies every pending migration from `drizzle/`; safe to run from several processes at once. */
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
  })
}
