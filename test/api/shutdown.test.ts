import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'

describe('graceful shutdown', () => {
  let t: TestApp
  let releaseSlow: () => void
  let markSlowStarted: () => void
  const slowStarted = new Promise<void>((resolve) => {
    markSlowStarted = resolve
  })
  beforeAll(async () => {
    t = await createTestApp({
      setup(app) {
        app.get('/test/slow', async () => {
          markSlowStarted()
          await new Promise<void>((resolve) => {
            releaseSlow = resolve
          })
          return { finished: true }
        })
      },
    })
  })
  afterAll(() => t.close())

  it('answers new requests 503 NOT_READY once shutdown has begun, except liveness', async () => {
    // service.stop() sets this before closing the server.
    t.app.lifecycle.shuttingDown = true
    try {
      const refused = await t.app.inject('/api/info')
      expect(refused.statusCode).toBe(503)
      expect(refused.headers.connection).toBe('close')
      expect(refused.json()).toMatchObject({ code: 'NOT_READY', status: 503 })
      expect((await t.app.inject('/readyz')).statusCode).toBe(503)
      expect((await t.app.inject('/healthz')).statusCode).toBe(200)
    } finally {
      t.app.lifecycle.shuttingDown = false
    }
  })

  it('finishes in-flight requests before close() resolves', async () => {
    const url = await t.app.listen({ host: '127.0.0.1', port: 0 })
    const inFlight = fetch(`${url}/test/slow`)
    await slowStarted
    let closed = false
    const closing = t.app.close().then(() => {
      closed = true
    })
    await vi.waitFor(() => expect(t.app.lifecycle.shuttingDown).toBe(true))
    expect(closed).toBe(false)

    releaseSlow()
    const response = await inFlight
    expect(response.status).toBe(200)
    expect(response.headers.get('connection')).toBe('close')
    expect(await response.json()).toEqual({ finished: true })
    await closing
    expect(closed).toBe(true)
  })
})
