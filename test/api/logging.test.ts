import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'

describe('request logs', () => {
  const { lines, logger } = captureLogs('debug')
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      logger,
      setup(app) {
        app.get('/test/protected', { preHandler: app.authenticate }, async () => ({ ok: true }))
      },
    })
  })
  afterAll(() => t.close())

  it('never contain the bearer token, cookies or query-string secrets', async () => {
    const user = await signInTestUser(t)
    await t.app.inject({
      url: '/test/protected?code=864213&state=s3cr3t-state',
      headers: { ...user.headers, cookie: 'session=cookie-secret' },
    })
    await t.app.inject({ url: '/api/nothing?code=864213', headers: { authorization: 'Bearer a.b.c' } })
    const log = lines.join('')
    expect(log).toContain('"path":"/test/protected"')
    expect(log).not.toContain(user.token)
    expect(log).not.toContain(user.token.split('.')[2])
    expect(log).not.toContain('864213')
    expect(log).not.toContain('s3cr3t-state')
    expect(log).not.toContain('cookie-secret')
  })
})
