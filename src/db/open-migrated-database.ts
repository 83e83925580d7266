// The service's database as every process of it opens it (the service, `npm run admin`): opened, then migrated.
import { type DatabaseHandle, openDatabase, pgliteDirectory } from './database.ts'
import { migrateDatabase } from './migrate.ts'
import { prepareNewPgliteDirectory } from './pglite-template.ts'

/**
 * The service's database, opened and migrated: PostgreSQL at `url`, else the embedded one under `dataDir` (made from
 * the template the first time). Closed again when a migration fails.
 */
export async function openMigratedDatabase(
  url: string | undefined,
  dataDir: string,
  poolSize?: number,
): Promise<DatabaseHandle> {
  const pgliteDir = pgliteDirectory(dataDir)
  if (url === undefined) await prepareNewPgliteDirectory(pgliteDir)
  const database = await openDatabase({ url, pgliteDir, ...(poolSize !== undefined && { poolSize }) })
  try {
    await migrateDatabase(database)
    return database
  } catch (error) {
    await database.close()
    throw error
  }
}
