// A request that meets PostgreSQL restarting or unreachable answers 503 NOT_READY with Retry-After (a passing outage
// the client retries), while a failing statement stays a 500 (found by the soak, bench/soak: a library sync during
// a PostgreSQL fast shutdown answered 500).
import { sql } from 'drizzle-orm'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isDatabaseUnavailable } from '../../src/db/database-unavailable.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'

describe('database outages', () => {
  let t: TestApp
  let unreachable: pg.Pool

  beforeAll(async () => {
    unreachable = new pg.Pool({ connectionString: `postgres://postgres@127.0.0.1:${await closedPort()}/anchor` })
    t = await createTestApp({
      setup(app) {
        app.get('/test/unreachable', async () => (await unreachable.query('SELECT 1')).rows)
        app.get('/test/bad-statement', async () => app.deps.database.db.execute(sql`SELECT * FROM no_such_table`))
      },
    })
  })
  afterAll(async () => {
    await unreachable?.end()
    await t?.close()
  })

  it('answers 503 NOT_READY with Retry-After when PostgreSQL refuses the connection', async () => {
    const response = await t.app.inject('/test/unreachable')
    expect(response.json()).toMatchObject({ status: 503, code: 'NOT_READY' })
    expect(response.statusCode).toBe(503)
    expect(response.headers['retry-after']).toBe('1')
    expect(response.body).not.toMatch(/127\.0\.0\.1|ECONNREFUSED/)
  })

  it('keeps a failing statement a 500', async () => {
    const response = await t.app.inject('/test/bad-statement')
    expect(response.statusCode).toBe(500)
    expect(response.json()).toMatchObject({ code: 'INTERNAL_ERROR' })
  })

  it('recognizes a server shutting down or restarting behind the query builder’s wrapper', () => {
    const driverError = (message: string, code?: string) => Object.assign(new Error(message), { code })
    const wrapped = (cause: Error) => new Error('Failed query: select 1', { cause })
    expect(isDatabaseUnavailable(wrapped(driverError('the database system is shutting down', '57P03')))).toBe(true)
    expect(
      isDatabaseUnavailable(wrapped(driverError('terminating connection due to administrator command', '57P01'))),
    ).toBe(true)
    expect(isDatabaseUnavailable(wrapped(driverError('Connection terminated unexpectedly')))).toBe(true)
    // A transaction's ROLLBACK on the client whose connection a failover cut (found by the soak).
    expect(
      isDatabaseUnavailable(wrapped(driverError('Client has encountered a connection error and is not queryable'))),
    ).toBe(true)
    // A connection that reached the standby in the seconds of a failover.
    expect(
      isDatabaseUnavailable(wrapped(driverError('cannot execute INSERT in a read-only transaction', '25006'))),
    ).toBe(true)
    expect(isDatabaseUnavailable(wrapped(driverError('relation "x" does not exist', '42P01')))).toBe(false)
    expect(isDatabaseUnavailable(wrapped(driverError('duplicate key value', '23505')))).toBe(false)
  })
})
