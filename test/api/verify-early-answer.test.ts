// The early answer of GET /api/verify/:txHash (src/api/routes/verify-early-answer.ts): a fresh hit answered before
// Fastify routes the request must be the route's answer, byte for byte, counted by the same limit, metrics and logs.
// Requests over HTTP reach the early answer; `inject` always goes through Fastify's route.
import type { Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { txHashToBase64Url } from '@docanchor/client'
import type { Hash } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { AppInstance } from '../../src/api/app-types.ts'
import { clientAddress } from '../../src/api/client-address.ts'
import { type EarlyAnswer, serverWithEarlyAnswers } from '../../src/api/early-answers.ts'
import { routeSeries } from '../../src/api/metrics.ts'
import { verifyEarlyAnswer } from '../../src/api/routes/verify-early-answer.ts'
import { startTestChain, type TestChain } from '../helpers/anvil.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'
import { anchorChain, indexAnchors, randomHash } from '../verify/helpers/anchors.ts'

/** Headers of the connection rather than the answer: Node adds them to HTTP answers, `inject` does not. */
const CONNECTION_HEADERS = ['date', 'connection', 'keep-alive']

interface Answer {
  status: number
  headers: Record<string, string>
  body: string
}

describe('the early answer of GET /api/verify/:txHash', () => {
  let testChain: TestChain
  const apps: TestApp[] = []

  /** An app listening on a local port, with a verified chain of two anchors whose tip it has cached. */
  async function listeningApp(env: Record<string, string> = {}, logger?: TestApp['app']['log']) {
    const t = await createTestApp({ env, testChain, ...(logger && { logger }) })
    apps.push(t)
    const anchored = await anchorChain(testChain, 2)
    await indexAnchors(t.database.handle.db, testChain, anchored)
    const tip = anchored.at(-1)!.txHash
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    return { t, app: t.app, url, tip }
  }

  async function overHttp(url: string, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await fetch(url, { headers })
    const all = Object.fromEntries(response.headers)
    for (const name of CONNECTION_HEADERS) delete all[name]
    return { status: response.status, headers: all, body: await response.text() }
  }

  async function injected(app: AppInstance, path: string, headers: Record<string, string> = {}): Promise<Answer> {
    const response = await app.inject({ method: 'GET', url: path, headers })
    const all = Object.fromEntries(Object.entries(response.headers).map(([name, value]) => [name, String(value)]))
    for (const name of CONNECTION_HEADERS) delete all[name]
    return { status: response.statusCode, headers: all, body: response.body }
  }

  beforeAll(async () => {
    testChain = await startTestChain()
  })
  afterAll(async () => {
    for (const t of apps) await t.close()
    await testChain?.stop()
  })

  it('sends what the route sends: status, every header and the body, 304 for a current ETag', async () => {
    const { app, url, tip } = await listeningApp({
      CORS_ORIGINS: 'https://verify.example',
      // HSTS is sent only by a service behind https.
      PUBLIC_URL: 'https://anchor.example',
      HSTS_MAX_AGE_SECONDS: '600',
    })
    const path = `/api/verify/${tip}`
    const first = await injected(app, path)
    expect(first.status).toBe(200)
    const etag = first.headers.etag!
    const variants: Record<string, string>[] = [
      {},
      { origin: 'https://verify.example' },
      { origin: 'https://elsewhere.example' },
      { 'if-none-match': etag },
      { 'if-none-match': `"other", W/${etag}`, origin: 'https://verify.example' },
      { 'if-none-match': '"other"' },
    ]
    for (const headers of variants) {
      const expected = await injected(app, path, headers)
      expect(expected.status).toBe('if-none-match' in headers && headers['if-none-match'] !== '"other"' ? 304 : 200)
      expect(await overHttp(`${url}${path}`, headers), JSON.stringify(headers)).toEqual(expected)
      // The QR code's base64url spelling of the same hash.
      const qrPath = `/api/verify/${txHashToBase64Url(tip)}`
      expect(await overHttp(`${url}${qrPath}`, headers), JSON.stringify(headers)).toEqual(expected)
    }
    expect(first.headers['strict-transport-security']).toBe('max-age=600; includeSubDomains')
  })

  it('keeps the server settings Fastify gives a server of its own, and makes no server of another kind', async () => {
    const { app } = await listeningApp()
    expect(app.server.keepAliveTimeout).toBe(72_000)
    expect(app.server.requestTimeout).toBe(0)
    const settings = { keepAliveTimeout: 5_000, requestTimeout: 0, connectionTimeout: 0, maxRequestsPerSocket: 0 }
    const make = serverWithEarlyAnswers([])
    expect(() => make(() => {}, { ...settings, https: {} })).toThrow(/plain HTTP/)
    expect(() => make(() => {}, { ...settings, http2: true })).toThrow(/plain HTTP/)
  })

  it('counts every request once under the per-IP limit, whichever path answers it', async () => {
    const { url, tip } = await listeningApp({ VERIFY_PER_IP_PER_MINUTE: '4' })
    // The tip was cached by a walk over `inject` (no address of its own); over HTTP: a hit, a miss the route answers,
    // two more hits. Counted twice, the miss would leave the last hit refused.
    const statuses = []
    for (const hash of [tip, randomHash(), tip, tip]) statuses.push((await fetch(`${url}/api/verify/${hash}`)).status)
    expect(statuses).toEqual([200, 404, 200, 200])
    const refused = await fetch(`${url}/api/verify/${tip}`)
    expect(refused.status).toBe(429)
    expect(refused.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(refused.headers.get('content-type')).toMatch(/^application\/problem\+json/)
    expect(await refused.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
  })

  it('keys the limit by the forwarded address behind a trusted proxy, as Fastify does', async () => {
    const { app, url, tip } = await listeningApp({ TRUST_PROXY: 'true', VERIFY_PER_IP_PER_MINUTE: '1' })
    await app.inject(`/api/verify/${tip}`)
    const from = (address: string) => fetch(`${url}/api/verify/${tip}`, { headers: { 'x-forwarded-for': address } })
    expect((await from('203.0.113.7')).status).toBe(200)
    expect((await from('203.0.113.7')).status).toBe(429)
    expect((await from('198.51.100.2, 127.0.0.1')).status).toBe(200)
  })

  it('adds its answers to the route’s series of the request metrics', async () => {
    const { app, url, tip } = await listeningApp()
    const path = `/api/verify/${tip}`
    const { etag } = (await injected(app, path)).headers
    for (let i = 0; i < 3; i++) await (await fetch(`${url}${path}`)).text()
    await (await fetch(`${url}${path}`, { headers: { 'if-none-match': etag! } })).text()
    const metrics = (await app.inject('/metrics')).body
    const count = (status: number) =>
      metrics
        .split('\n')
        .filter((line) =>
          line.startsWith(`http_requests_total{method="GET",route="/api/verify/:txHash",status="${status}"}`),
        )
    // One series per status (never one per path), holding the injected answer and the three over HTTP.
    expect(count(200)).toEqual([expect.stringMatching(/ 4$/)])
    expect(count(304)).toEqual([expect.stringMatching(/ 1$/)])
  })

  it('logs the two lines Fastify logs for a request at info', async () => {
    const { lines, logger } = captureLogs('info')
    const { app, url, tip } = await listeningApp({}, logger)
    const path = `/api/verify/${tip}`
    await app.inject(path)
    lines.length = 0
    // Once through the route (a query string goes to it), once early.
    await (await fetch(`${url}${path}?via=route`)).text()
    await (await fetch(`${url}${path}`)).text()
    const logged = lines.map((line) => JSON.parse(line) as Record<string, unknown>)
    const shape = ({ level, msg, req, res, reqId, responseTime }: Record<string, unknown>) => ({
      level,
      msg,
      req,
      res,
      reqId: typeof reqId,
      responseTime: typeof responseTime,
    })
    expect(logged.map(shape)).toEqual([
      { ...shape(logged[0]!), msg: 'incoming request' },
      { ...shape(logged[1]!), msg: 'request completed' },
      { ...shape(logged[0]!), req: { method: 'GET', path, ip: '127.0.0.1' } },
      { ...shape(logged[1]!) },
    ])
    expect(logged[1]).toMatchObject({ res: { statusCode: 200 }, responseTime: expect.any(Number) })
    expect(new Set(logged.map((line) => line.reqId)).size).toBe(2)
  })

  describe('which requests it answers', () => {
    let app: AppInstance
    let tip: Hash
    let server: Server
    let base: string
    /** What reached Fastify's handler, in order. */
    const routed: string[] = []

    beforeAll(async () => {
      ;({ app, tip } = await listeningApp({ VERIFY_PER_IP_PER_MINUTE: '3' }))
      // The app's own parts, wired as the route wires them, in front of a handler that records what falls through.
      const limit = app.limiter({ name: 'early-test', max: 3, timeWindowMs: 60_000, what: 'requests' })
      const answer: EarlyAnswer = verifyEarlyAnswer({
        pathPrefix: '/api/verify/',
        service: app.verify,
        countEarly: limit.countEarly!,
        headers: app.answerHeaders,
        lifecycle: app.lifecycle,
        clientAddress: clientAddress(false),
        seriesOf: routeSeries(app.deps.metrics, '/api/verify/:txHash', ['GET']),
        log: app.log,
        nextRequestId: app.earlyAnswers.nextRequestId,
        freshCacheControl: 'public, max-age=60',
        contentType: 'application/json; charset=utf-8',
      })
      const factory = serverWithEarlyAnswers([answer])
      const settings = { keepAliveTimeout: 5_000, requestTimeout: 0, connectionTimeout: 0, maxRequestsPerSocket: 0 }
      server = factory((request, response) => {
        routed.push(`${request.method} ${request.url}`)
        response.writeHead(299).end()
      }, settings)
      server.listen(0, '127.0.0.1')
      await new Promise((resolve) => server.once('listening', resolve))
      base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      await app.inject(`/api/verify/${tip}`)
    })
    afterAll(() => new Promise((resolve) => server.close(resolve)))

    it('answers a fresh hit of a well-formed GET, and hands anything else to Fastify', async () => {
      const status = async (path: string, method = 'GET') => (await fetch(`${base}${path}`, { method })).status
      const miss = randomHash()
      expect(await status(`/api/verify/${tip}`)).toBe(200)
      expect(await status(`/api/verify/${tip}`, 'HEAD')).toBe(299)
      expect(await status(`/api/verify/${tip}?x=1`)).toBe(299)
      expect(await status(`/api/verify/${tip.slice(0, 10)}%61${tip.slice(11)}`)).toBe(299)
      expect(await status(`/api/verify/${tip}/`)).toBe(299)
      expect(await status(`/api/verify/${miss}`)).toBe(299)
      expect(await status('/api/info')).toBe(299)
      app.lifecycle.shuttingDown = true
      expect(await status(`/api/verify/${tip}`)).toBe(299)
      app.lifecycle.shuttingDown = false
      // The limit (3): the hit and the miss were counted; one more hit, then the refusal goes to Fastify's route.
      expect(await status(`/api/verify/${tip}`)).toBe(200)
      expect(await status(`/api/verify/${tip}`)).toBe(299)
      expect(routed).toEqual([
        `HEAD /api/verify/${tip}`,
        `GET /api/verify/${tip}?x=1`,
        `GET /api/verify/${tip.slice(0, 10)}%61${tip.slice(11)}`,
        `GET /api/verify/${tip}/`,
        `GET /api/verify/${miss}`,
        'GET /api/info',
        `GET /api/verify/${tip}`,
        `GET /api/verify/${tip}`,
      ])
    })
  })
})
