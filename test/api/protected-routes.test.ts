// Every protected route answers 401 before it looks at the body, params or query (issue 14, points 1, 7, 11, 12).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueToken } from '../../src/auth/jwt.ts'
import { createTestApp, signInTestUser, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts'

const PROTECTED: { method: 'GET' | 'POST' | 'PUT' | 'DELETE'; url: string; payload?: string }[] = [
  { method: 'POST', url: '/api/relay', payload: '{"compositeHash":"nope"}' },
  { method: 'POST', url: '/api/relay', payload: '' },
  { method: 'GET', url: '/api/anchors/zz' },
  { method: 'GET', url: '/api/auth/me?x=1' },
  { method: 'POST', url: '/api/auth/logout', payload: '{"broken":' },
  { method: 'GET', url: '/api/library' },
  { method: 'PUT', url: '/api/library/sync', payload: '{"signatures":{"upsert":[{"id":"not-a-uuid"}]}}' },
  { method: 'DELETE', url: '/api/library' },
  { method: 'GET', url: '/api/library/exists' },
]

describe('protected routes', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
  })
  afterAll(() => t.close())

  const tokens: [string, () => Promise<Record<string, string>>][] = [
    ['no token', async () => ({})],
    ['a malformed token', async () => ({ authorization: 'Bearer a.b.c' })],
    [
      'a revoked token',
      async () => {
        const user = await signInTestUser(t)
        await t.app.deps.sessions.revoke(user.sessionId, user.id)
        return user.headers
      },
    ],
  ]

  for (const [label, headersOf] of tokens) {
    it(`answer 401 to ${label} whatever the body, params or query`, async () => {
      const headers = await headersOf()
      for (const route of PROTECTED) {
        const response = await t.app.inject({
          method: route.method,
          url: route.url,
          headers: { ...headers, ...(route.payload !== undefined && { 'content-type': 'application/json' }) },
          ...(route.payload !== undefined && { payload: route.payload }),
        })
        expect({ route, status: response.statusCode }).toEqual({ route, status: 401 })
        expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' })
        expect(response.body).not.toContain('compositeHash')
      }
    })
  }

  it('answer 401 to a validly signed token whose sid or sub is not a UUID', async () => {
    const user = await signInTestUser(t)
    for (const claims of [
      { sub: user.id, sid: 'not-a-uuid' },
      { sub: 'not-a-uuid', sid: user.sessionId },
    ]) {
      const { token } = await issueToken(
        { secret: TEST_JWT_SECRET, issuer: t.config.jwt.issuer, audience: t.config.jwt.audience },
        { ...claims, email: user.email, trust: 'email', verified: true },
      )
      const response = await t.app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' })
    }
  })

  it('accept the Authorization scheme in any case', async () => {
    const user = await signInTestUser(t)
    for (const scheme of ['bearer', 'BEARER', 'Bearer']) {
      const response = await t.app.inject({
        url: '/api/auth/me',
        headers: { authorization: `${scheme} ${user.token}` },
      })
      expect(response.statusCode).toBe(200)
    }
  })

  it('mark answers that carry a user’s data as private and not to be stored', async () => {
    const user = await signInTestUser(t)
    for (const url of ['/api/auth/me', '/api/library', '/api/library/exists']) {
      const response = await t.app.inject({ url, headers: user.headers })
      expect(response.statusCode).toBe(200)
      expect(response.headers['cache-control']).toBe('private, no-store')
    }
  })
})
