// Opens the database the configuration names: PostgreSQL when DATABASE_URL is set, else PGlite under the data dir.
// Each driver is imported only when its database is opened: a start pays for one of them, not both (pg and its
// drizzle driver are ~140 ms of module loading an embedded start does not need).
import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import type { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core'
import type pg from 'pg'
import { DatabaseHistory } from './database-history.ts'
import * as schema from './schema.ts'

export type Schema = typeof schema
export type Database = PgDatabase<PgQueryResultHKT, Schema>

/** One statement without parameters, run by the driver itself, answering its rows (typed by the caller). */
export type RawQuery = <T>(text: string) => Promise<T[]>

interface CommonHandle {
  db: Database
  /**
   * The same database without drizzle and without parameters, for the hottest read (a verification's index lookup),
   * whose caller writes only checked literals into the statement. PGlite answers a statement with parameters in six
   * protocol exchanges (parse, describe, bind, describe, execute, sync) and one without in a single one, and drizzle
   * builds a prepared-query object with its own parser tables for every statement: on PGlite the lookup of a depth-1
   * chain took ~0.5 ms through drizzle and ~0.3 ms this way. Outside any transaction.
   */
  query: RawQuery
  /** Runs `fn` while holding a cluster-wide lock, so several processes never migrate at once. */
  withMigrationLock<T>(fn: () => Promise<T>): Promise<T>
  ping(): Promise<void>
  close(): Promise<void>
}

export type DatabaseHandle =
  | (CommonHandle & {
      kind: 'postgres'
      pool: pg.Pool
      /** Tells when connections start writing to another history (a failover, another cluster). */
      history: DatabaseHistory
    })
  | (CommonHandle & { kind: 'pglite'; pglite: PGlite })

export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; absent means embedded PGlite. */
  url?: string | undefined
  /** Directory for PGlite's files; absent means in memory. */
  pgliteDir?: string | undefined
  /** A PGlite data dir dump to start from (tests clone a migrated template this way). */
  pgliteTemplate?: Blob | undefined
  poolSize?: number
}

/** PGlite's WebAssembly memory at start. Its default, 128 MiB, is grown to ~190 MiB while PostgreSQL starts; starting
 * above that skips the growing (~35 ms of a warm open, median of 8 alternating opens on the 2-core machine). Pages
 * are committed only when touched: the process held ~295 MB resident after opening either way. */
const PGLITE_INITIAL_MEMORY_BYTES = 256 * 1024 * 1024

// An arbitrary constant shared by every instance of this service.
const MIGRATION_LOCK_KEY = 7_316_452_901

export async function openDatabase(options: OpenDatabaseOptions): Promise<DatabaseHandle> {
  if (options.url !== undefined) return openPostgres(options.url, options.poolSize ?? 10)
  return openPglite(options.pgliteDir, options.pgliteTemplate)
}

async function openPostgres(url: string, poolSize: number): Promise<DatabaseHandle> {
  const [{ default: pg }, { drizzle: drizzleNodePg }] = await Promise.all([
    import('pg'),
    import('drizzle-orm/node-postgres'),
  ])
  const history = new DatabaseHistory()
  const pool = new pg.Pool({ connectionString: url, max: poolSize, Client: history.clientClass(pg.Client) })
  // A client losing its connection (PostgreSQL restarting, a failover) must not crash the process: the pool's own
  // listener covers idle clients; a checked-out client between two statements emits on itself, so every client gets
  // a listener too. The statement in flight still fails, and the pool discards the dead client when it is released.
  pool.on('error', () => {})
  pool.on('connect', (client) => client.on('error', () => {}))
  const db = drizzleNodePg({ client: pool, schema }) as unknown as Database
  return {
    db,
    kind: 'postgres',
    pool,
    history,
    query: async <T>(text: string) => (await pool.query(text)).rows as T[],
    async withMigrationLock(fn) {
      const client = await pool.connect()
      try {
        await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_KEY])
        return await fn()
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_KEY]).catch(() => {})
        client.release()
      }
    },
    ping: pingOf(db),
    close: () => pool.end(),
  }
}

async function openPglite(dir: string | undefined, template: Blob | undefined): Promise<DatabaseHandle> {
  const [{ openPgliteForDrizzle }, { drizzle: drizzlePglite }] = await Promise.all([
    import('./pglite-client.ts'),
    import('drizzle-orm/pglite'),
    dir !== undefined && mkdir(dir, { recursive: true }),
  ])
  const client = await openPgliteForDrizzle({
    initialMemory: PGLITE_INITIAL_MEMORY_BYTES,
    ...(dir !== undefined && { dataDir: dir }),
    ...(template && { loadDataDir: template }),
  })
  const db = drizzlePglite({ client, schema }) as unknown as Database
  return {
    db,
    kind: 'pglite',
    pglite: client,
    query: async <T>(text: string) => ((await client.exec(text))[0]?.rows ?? []) as T[],
    // PGlite is one connection in one process: nothing else can migrate concurrently.
    withMigrationLock: (fn) => fn(),
    ping: pingOf(db),
    close: () => client.close(),
  }
}

/** The readiness check of either database: one trivial statement through drizzle, as every query goes. */
function pingOf(db: Database): () => Promise<void> {
  return async () => {
    await db.execute(sql`SELECT 1`)
  }
}

export function pgliteDirectory(dataDir: string): string {
  return join(dataDir, 'pglite')
}
