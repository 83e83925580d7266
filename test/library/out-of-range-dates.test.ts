// Dates the database cannot store are a 400 naming the field, and failed queries never log their parameters
// (issue 14, point 4).
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'
import { signature, snippet } from './fixtures.ts'

const YEAR_ZERO = '0000-01-01T00:00:00.000Z'

describe('library sync with out-of-range dates', () => {
  const { lines, logger } = captureLogs('info')
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0' },
      logger,
      setup(app) {
        // A query that fails in PostgreSQL with a parameter that must not reach the log.
        app.post('/test/failing-query', async (request) => {
          const { secret } = request.body as { secret: string }
          await app.deps.database.db.execute(sql`SELECT ${secret}::int AS n`)
          return { ok: true }
        })
      },
    })
  })
  afterAll(() => t.close())

  it('answers 400 naming each out-of-range timestamp, and applies nothing', async () => {
    const user = await signInTestUser(t)
    const cases = [
      {
        body: { signatures: { upsert: [signature({ updatedAt: YEAR_ZERO })] } },
        path: 'signatures.upsert.0.updatedAt',
      },
      { body: { snippets: { upsert: [snippet({ createdAt: YEAR_ZERO })] } }, path: 'snippets.upsert.0.createdAt' },
      {
        body: { signatures: { delete: [{ id: crypto.randomUUID(), deletedAt: YEAR_ZERO }] } },
        path: 'signatures.delete.0.deletedAt',
      },
    ]
    for (const { body, path } of cases) {
      const response = await t.app.inject({
        method: 'PUT',
        url: '/api/library/sync',
        headers: user.headers,
        payload: body,
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path }] })
    }
    const status = await t.app.inject({ url: '/api/library/exists', headers: user.headers })
    expect(status.json()).toMatchObject({ exists: false })
  })

  it('logs a failed query without its SQL parameters, in a bounded summary', async () => {
    const secret = `label-and-png-${'Z'.repeat(5000)}`
    lines.length = 0
    const response = await t.app.inject({ method: 'POST', url: '/test/failing-query', payload: { secret } })
    expect(response.statusCode).toBe(500)
    expect(response.body).not.toContain('label-and-png')
    const log = lines.join('')
    expect(log).toContain('request failed')
    expect(log).not.toContain('label-and-png')
    expect(log.length).toBeLessThan(4000)
  })
})
