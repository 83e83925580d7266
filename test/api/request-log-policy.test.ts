// REQUEST_LOG: which requests the real app writes a line for (src/api/request-log-policy.ts).
import { afterAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('REQUEST_LOG', () => {
  const apps: TestApp[] = []
  afterAll(async () => {
    for (const t of apps) await t.close()
  })

  /** The app with the setting, and a quick, a slow and a failing route; returns the lines of one request each. */
  async function appLogging(env: Record<string, string>) {
    const { lines, logger } = captureLogs('info')
    const t = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0', REQUEST_LOG_SLOW_MS: '200', ...env },
      ...(apps[0] && { testChain: apps[0].testChain }),
      logger,
      setup(app) {
        app.get('/test/slow', async () => {
          await sleep(300)
          return { ok: true }
        })
        app.get('/test/fails', async () => {
          throw new Error('a fault of the test route')
        })
      },
    })
    apps.push(t)
    return async (url: string) => {
      lines.length = 0
      await t.app.inject({ url, remoteAddress: '192.0.2.9' })
      return lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    }
  }

  it('all: Fastify’s two lines for every request', async () => {
    const linesOf = await appLogging({ REQUEST_LOG: 'all' })
    for (const url of ['/healthz', '/api/nothing', '/test/slow']) {
      expect((await linesOf(url)).map(({ msg }) => msg)).toEqual(['incoming request', 'request completed'])
    }
  })

  it('failed-or-slow: one line, with the request, for a 5xx or a slow request; none for the rest', async () => {
    const linesOf = await appLogging({ REQUEST_LOG: 'failed-or-slow' })
    expect(await linesOf('/healthz')).toEqual([])
    expect(await linesOf('/api/nothing')).toEqual([])
    const slow = await linesOf('/test/slow')
    expect(slow).toEqual([
      expect.objectContaining({
        level: 40,
        msg: 'request completed',
        req: { method: 'GET', path: '/test/slow', ip: '192.0.2.9' },
        res: { statusCode: 200 },
        reqId: expect.any(String),
      }),
    ])
    expect(slow[0]!.responseTime).toBeGreaterThanOrEqual(200)
    const failed = await linesOf('/test/fails')
    // The app's own error line, then the request's.
    expect(failed.map(({ level, msg }) => [level, msg])).toEqual([
      [50, 'request failed'],
      [40, 'request completed'],
    ])
    expect(failed[1]).toMatchObject({ req: { path: '/test/fails' }, res: { statusCode: 500 } })
    expect(failed[1]!.reqId).toBe(failed[0]!.reqId)
  })

  it('off: no line for any request; a failure is still logged by the app', async () => {
    const linesOf = await appLogging({ REQUEST_LOG: 'off' })
    expect(await linesOf('/test/slow')).toEqual([])
    expect((await linesOf('/test/fails')).map(({ msg }) => msg)).toEqual(['request failed'])
  })
})
