// PostgreSQL ending a connection that a request holds between two statements (a restart's fast shutdown) must fail
// that request only, never the process (found by the soak, bench/soak: an instance died on a PostgreSQL restart with
// an unhandled 'error' event). PostgreSQL only: PGlite has no connections to lose.
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '../helpers/db/database.ts'

describe.runIf(testPostgresUrl !== undefined)('a PostgreSQL connection ended by the server', () => {
  let database: TestDatabase

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => database?.close())

  it('fails the holder of the connection, not the process, and the pool carries on', async () => {
    const { handle } = database
    if (handle.kind !== 'postgres') throw new Error('expected PostgreSQL')
    const held = await handle.pool.connect()
    const { rows } = await held.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')
    const ended = new Promise((resolve) => held.once('end', resolve))
    // What a fast shutdown does to every backend: 57P01, then the connection closes.
    const admin = new pg.Client({ connectionString: database.url })
    await admin.connect()
    await admin.query('SELECT pg_terminate_backend($1)', [rows[0]!.pid])
    await admin.end()
    await ended
    await expect(held.query('SELECT 1')).rejects.toThrow()
    held.release(true)
    const answer = await handle.pool.query('SELECT 1 AS one')
    expect(answer.rows).toEqual([{ one: 1 }])
  })
})
