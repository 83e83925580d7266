// Raw SQL on either driver: what a statement runs on, and the rows it answers.
import type { SQL } from 'drizzle-orm'
import type { Database } from './database.ts'

/** The database or a transaction of it: anything a raw statement can run on. */
export type Executor = Pick<Database, 'execute'>

/** Rows of a raw statement, typed by the caller: node-postgres and PGlite both answer `{ rows }`. */
export async function rows<T = Record<string, unknown>>(db: Executor, statement: SQL): Promise<T[]> {
  const result = (await db.execute(statement)) as unknown as { rows: T[] }
  return result.rows
}
