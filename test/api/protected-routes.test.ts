// Every protected route answers 401 before it looks at the body, params or query (issue 14, points 1, 7, 11, 12).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { issueToken } from '../../src/auth/jwt.ts'
import { createTestApp, signInTestUser, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts'

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH'
interface ProtectedRoute {
  method: Method
  url: string
  payload?: string
}

/** Bodies a route must not look at before it has a session: malformed, empty, or of the wrong shape. */
const HOSTILE_BODIES = ['{"broken":', '', '{"compositeHash":"nope","signatures":{"upsert":[{"id":"not-a-uuid"}]}}']

/**
 * Every operation the OpenAPI document marks with `security`, so that a new protected route is checked without
 * anyone adding it here: path parameters filled with what no route accepts, a query the route does not know, and
 * each hostile body for an operation that takes one.
 */
async function protectedRoutes(t: TestApp): Promise<ProtectedRoute[]> {
  const document = (await t.app.inject({ url: '/openapi.json' })).json() as {
    paths: Record<string, Record<string, { security?: unknown[]; requestBody?: unknown }>>
  }
  const routes: ProtectedRoute[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      if (!operation.security?.length) continue
      const url = `${path.replace(/\{[^}]+\}/g, 'zz')}?x=1`
      const upper = method.toUpperCase() as Method
      if (operation.requestBody) for (const payload of HOSTILE_BODIES) routes.push({ method: upper, url, payload })
      else routes.push({ method: upper, url })
    }
  }
  return routes
}

describe('protected routes', () => {
  let t: TestApp
  let PROTECTED: ProtectedRoute[]
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
    PROTECTED = await protectedRoutes(t)
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

  it('are every operation the OpenAPI document marks as needing a session, the API contract’s included', () => {
    const operations = new Set(PROTECTED.map((route) => `${route.method} ${route.url.replace(/\?.*/, '')}`))
    // Literal, from API.md: a route that lost its `security` would drop out of the checks below.
    for (const known of [
      'POST /api/relay',
      'GET /api/anchors/zz',
      'GET /api/anchors',
      'GET /api/events',
      'GET /api/auth/me',
      'POST /api/auth/logout',
      'GET /api/library',
      'PUT /api/library/sync',
      'DELETE /api/library',
      'GET /api/library/exists',
    ]) {
      expect(operations).toContain(known)
    }
  })

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
