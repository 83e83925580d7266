import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../helpers/app.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'

describe('API skeleton', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      env: { BODY_LIMIT_BYTES: '2048', CORS_ORIGINS: 'https://verify.example' },
      setup(app) {
        // Probe routes, registered the way resource modules register theirs.
        app.get('/test/protected', { preHandler: app.authenticate }, async (request) => ({ user: request.user.id }))
        app.post('/test/echo', async (request) => request.body)
      },
    })
  })
  afterAll(() => t.close())

  describe('GET /healthz and /readyz', () => {
    it('answers 200 while the database and the chain answer', async () => {
      expect((await t.app.inject('/healthz')).json()).toEqual({ status: 'ok' })
      const ready = await t.app.inject('/readyz')
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({ status: 'ready', checks: { database: 'ok', chain: 'ok', contract: 'ok' } })
    })
  })

  it('says degraded, still 200, while Redis does not answer, naming it', async () => {
    const redisless = await createTestApp({
      testChain: t.testChain,
      env: { REDIS_URL: `redis://127.0.0.1:${await closedPort()}`, RELAY_MONITOR_INTERVAL_MS: '0' },
    })
    try {
      const ready = await redisless.app.inject('/readyz')
      expect(ready.statusCode).toBe(200)
      expect(ready.json()).toEqual({
        status: 'degraded',
        checks: { database: 'ok', chain: 'ok', contract: 'ok', redis: 'failing' },
      })
    } finally {
      await redisless.close()
    }
  })

  describe('GET /api/info', () => {
    it('returns the chain, the contract and the relayers', async () => {
      const response = await t.app.inject('/api/info')
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({
        chainId: 31337,
        contractAddress: t.testChain.contract.toLowerCase(),
        relayers: [t.testChain.account(0).address.toLowerCase()],
        publicRpcUrl: t.testChain.rpcUrl,
        explorerTxUrl: null,
      })
    })
  })

  describe('errors', () => {
    it('returns a problem body for an unknown route, without echoing the request', async () => {
      const response = await t.app.inject('/api/nothing-here?secret=1')
      expect(response.body).not.toContain('nothing-here')
      expect(response.statusCode).toBe(404)
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(response.json()).toEqual({
        type: 'about:blank',
        title: 'Not Found',
        status: 404,
        code: 'NOT_FOUND',
        detail: 'No route matches this method and path',
      })
    })

    it('returns 400 MALFORMED_REQUEST for bad JSON', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/test/echo',
        headers: { 'content-type': 'application/json' },
        payload: '{"a":',
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({ code: 'MALFORMED_REQUEST', status: 400 })
    })

    it('returns 413 PAYLOAD_TOO_LARGE for a body over the limit', async () => {
      const response = await t.app.inject({
        method: 'POST',
        url: '/test/echo',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ data: 'x'.repeat(4096) }),
      })
      expect(response.statusCode).toBe(413)
      expect(response.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' })
    })
  })

  describe('authenticate guard', () => {
    it('rejects a request without a token', async () => {
      const response = await t.app.inject('/test/protected')
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' })
    })

    it('accepts a live session and rejects it once revoked', async () => {
      const user = await signInTestUser(t)
      const ok = await t.app.inject({ url: '/test/protected', headers: user.headers })
      expect(ok.json()).toEqual({ user: user.id })
      await t.app.deps.sessions.revoke(user.sessionId, user.id)
      const revoked = await t.app.inject({ url: '/test/protected', headers: user.headers })
      expect(revoked.statusCode).toBe(401)
    })
  })

  describe('CORS', () => {
    it('allows the configured origin and no other', async () => {
      const allowed = await t.app.inject({ url: '/api/info', headers: { origin: 'https://verify.example' } })
      expect(allowed.headers['access-control-allow-origin']).toBe('https://verify.example')
      const other = await t.app.inject({ url: '/api/info', headers: { origin: 'https://evil.example' } })
      expect(other.headers['access-control-allow-origin']).toBeUndefined()
      // Either way the answer depends on the origin, and a page may read the ETag and Retry-After.
      for (const response of [allowed, other]) {
        expect(response.headers.vary).toBe('Origin')
        expect(response.headers['access-control-expose-headers']).toBe('etag, retry-after')
      }
    })

    it('answers a preflight 204 before any authentication, and refuses one without its headers', async () => {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/relay',
        headers: {
          origin: 'https://verify.example',
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      })
      expect(preflight.statusCode).toBe(204)
      expect(preflight.headers).toMatchObject({
        'access-control-allow-origin': 'https://verify.example',
        'access-control-allow-methods': 'GET, HEAD, POST, PUT, DELETE',
        'access-control-allow-headers': 'authorization, content-type, if-none-match',
        'access-control-max-age': '600',
        'content-length': '0',
      })
      expect(preflight.body).toBe('')
      const bare = await t.app.inject({
        method: 'OPTIONS',
        url: '/api/relay',
        headers: { origin: 'https://verify.example' },
      })
      expect(bare.statusCode).toBe(400)
      expect(bare.body).toBe('Invalid Preflight Request')
    })

    it("answers a public verification's preflight for every origin, as its answers", async () => {
      const preflight = await t.app.inject({
        method: 'OPTIONS',
        url: `/api/verify/0x${'00'.repeat(32)}`,
        headers: {
          origin: 'https://elsewhere.example',
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'if-none-match',
        },
      })
      expect(preflight.statusCode).toBe(204)
      expect(preflight.headers['access-control-allow-origin']).toBe('*')
      expect(preflight.headers.vary).toBeUndefined()
    })

    it('allows every origin when told to, and then does not vary by it', async () => {
      const open = await createTestApp({ env: { CORS_ORIGINS: '*' } })
      try {
        const response = await open.app.inject({ url: '/api/info', headers: { origin: 'https://any.example' } })
        expect(response.headers['access-control-allow-origin']).toBe('*')
        expect(response.headers.vary).toBeUndefined()
      } finally {
        await open.close()
      }
    })
  })

  describe('GET /openapi.json and /metrics', () => {
    it('publishes the OpenAPI 3.1 document', async () => {
      const doc = (await t.app.inject('/openapi.json')).json()
      expect(doc.openapi).toBe('3.1.0')
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/healthz', '/readyz', '/api/info']))
    })

    it('counts requests by route template', async () => {
      await t.app.inject('/api/info')
      const text = (await t.app.inject('/metrics')).body
      expect(text).toMatch(/http_requests_total\{method="GET",route="\/api\/info",status="200"\} \d+/)
    })

    it('counts each response once, under its method, route template and status', async () => {
      const count = async (labels: string) => {
        const text = (await t.app.inject('/metrics')).body
        const line = text.split('\n').find((row) => row.startsWith(`http_requests_total{${labels}} `))
        return Number(line?.split(' ')[1] ?? 0)
      }
      const get = 'method="GET",route="/api/verify/:txHash",status="400"'
      const head = 'method="HEAD",route="/api/info",status="200"'
      const unmatched = 'method="GET",route="unmatched",status="404"'
      const before = [await count(get), await count(head), await count(unmatched)]
      await t.app.inject('/api/verify/not-a-hash')
      await t.app.inject('/api/verify/still-not-a-hash')
      await t.app.inject({ method: 'HEAD', url: '/api/info' })
      await t.app.inject('/no/such/route')
      expect([await count(get), await count(head), await count(unmatched)]).toEqual([
        before[0]! + 2,
        before[1]! + 1,
        before[2]! + 1,
      ])
    })
  })
})
