// Transport and metrics protection (issue 14, points 8, 12 and 13).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'

const METRICS_TOKEN = 'metrics-token-of-at-least-32-characters'

describe('security headers and /metrics protection', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        PUBLIC_URL: 'https://anchors.example',
        HSTS_MAX_AGE_SECONDS: '31536000',
        METRICS_TOKEN,
      },
    })
  })
  afterAll(() => t.close())

  it('sends Strict-Transport-Security when configured for an https PUBLIC_URL', async () => {
    for (const url of ['/healthz', '/api/info', '/api/nothing']) {
      const response = await t.app.inject(url)
      expect(response.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains')
    }
  })

  it('gives the Swagger UI under /docs a Content-Security-Policy', async () => {
    const response = await t.app.inject('/docs/')
    expect(response.statusCode).toBe(200)
    const policy = String(response.headers['content-security-policy'])
    expect(policy).toContain("default-src 'self'")
    expect(policy).toContain("frame-ancestors 'none'")
  })

  it('answers /metrics only to the configured bearer token', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Basic ${METRICS_TOKEN}`]) {
      const response = await t.app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} })
      expect(response.statusCode).toBe(401)
      expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' })
      expect(response.body).not.toContain('http_requests_total')
    }
    const allowed = await t.app.inject({ url: '/metrics', headers: { authorization: `bearer ${METRICS_TOKEN}` } })
    expect(allowed.statusCode).toBe(200)
    expect(allowed.body).toContain('http_requests_total')
  })
})

describe('without METRICS_TOKEN or HSTS (development)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
  })
  afterAll(() => t.close())

  it('keeps /metrics open and sends no Strict-Transport-Security over http', async () => {
    const response = await t.app.inject('/metrics')
    expect(response.statusCode).toBe(200)
    expect(response.headers['strict-transport-security']).toBeUndefined()
  })
})
