// Raw SQL on either driver: what a statement runs on, and the rows it answers.
import { type SQL, sql } from 'drizzle-orm'
import type { Database } from './database.ts'

/** The database or a transaction of it: anything a raw statement can run on. */
export type Executor = Pick<Database, 'execute'>

/** Rows of a raw statement, typed by the caller: node-postgres and PGlite both answer `{ rows }`. */
export async function rows<T = Record<string, unknown>>(db: Executor, statement: SQL): Promise<T[]> {
  const result = (await db.execute(statement)) as unknown as { rows: T[] }
  return result.rows
}

/** A timestamptz column (a name the caller writes, never input) as ISO 8601 UTC with milliseconds, or null. */
export function isoTimestamp(column: string): SQL {
  return sql.raw(`to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`)
}
