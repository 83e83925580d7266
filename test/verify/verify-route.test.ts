import { txHashToBase64Url } from '@docanchor/client'
import type { LightMyRequestResponse as InjectResponse } from 'fastify'
import type { Hash } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import {
  anchorChain,
  chainFromLogs,
  indexAnchors,
  payloadOf,
  randomHash,
  sendPlainTransfer,
  type TestAnchor,
} from './helpers/anchors.ts'

interface VerifyApp {
  t: TestApp
  proxy: RpcProxy
  get(id: string, headers?: Record<string, string>): Promise<InjectResponse>
  index(anchored: readonly TestAnchor[]): Promise<void>
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('GET /api/verify/:txHash', () => {
  let testChain: TestChain
  const apps: VerifyApp[] = []
  let main: VerifyApp

  /** An app whose chain client goes through its own counting proxy. */
  async function verifyApp(env: Record<string, string> = {}): Promise<VerifyApp> {
    const proxy = await startRpcProxy(testChain.rpcUrl)
    const t = await createTestApp({ env, testChain: { ...testChain, rpcUrl: proxy.url } })
    const app: VerifyApp = {
      t,
      proxy,
      get: (id, headers = {}) => t.app.inject({ method: 'GET', url: `/api/verify/${id}`, headers }),
      index: (anchored) => indexAnchors(t.database.handle.db, testChain, anchored),
    }
    apps.push(app)
    return app
  }

  function receiptCalls(app: VerifyApp): unknown[] {
    return app.proxy.requests.flat().filter((call) => call.method === 'eth_getTransactionReceipt')
  }

  /** One app with short lifetimes and a shallow walk limit, shared by the tests that need them. */
  let tunedApp: Promise<VerifyApp> | undefined
  function tuned(): Promise<VerifyApp> {
    tunedApp ??= verifyApp({ VERIFY_CACHE_TTL_SECONDS: '1', VERIFY_NOT_FOUND_TTL_SECONDS: '1', VERIFY_MAX_DEPTH: '5' })
    return tunedApp
  }

  async function metric(app: VerifyApp, name: string): Promise<number> {
    const text = (await app.t.app.inject('/metrics')).body
    const line = text.split('\n').find((row) => row.startsWith(`${name} `))
    return Number(line?.split(' ')[1] ?? Number.NaN)
  }

  beforeAll(async () => {
    testChain = await startTestChain()
    main = await verifyApp()
  })
  afterAll(async () => {
    for (const app of apps) {
      await app.t.close()
      await app.proxy.close()
    }
    await testChain?.stop()
  })
  beforeEach(() => {
    for (const app of apps) app.proxy.reset()
  })

  describe('an anchor of this contract', () => {
    it('returns the anchor, its chain and its payload with Cache-Control and an ETag', async () => {
      const anchored = await anchorChain(testChain, 3)
      await main.index(anchored)
      const tip = anchored[2]!
      const response = await main.get(tip.txHash)

      expect(response.statusCode).toBe(200)
      expect(response.headers['content-type']).toBe('application/json; charset=utf-8')
      expect(response.headers['cache-control']).toBe('public, max-age=60')
      expect(response.headers.etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/)
      const chain = await chainFromLogs(testChain, tip.txHash)
      const last = chain[2]!
      const body = response.json()
      expect(body).toEqual({
        txHash: tip.txHash,
        compositeHash: last.compositeHash,
        signer: testChain.account(0).address.toLowerCase(),
        timestamp: last.timestamp,
        previousTxHash: anchored[1]!.txHash,
        chain,
        encryptedPayload: payloadOf(tip),
        payloadErased: false,
        successors: [],
        moreSuccessors: 0,
        attestation: null,
      })
      expect(Object.keys(body)).toEqual([
        'txHash',
        'compositeHash',
        'signer',
        'timestamp',
        'previousTxHash',
        'chain',
        'encryptedPayload',
        'payloadErased',
        'successors',
        'moreSuccessors',
        'attestation',
      ])
    })

    it('answers the upper-case hex and the base64url QR form with the same bytes', async () => {
      const [anchor] = await anchorChain(testChain, 1)
      const lower = await main.get(anchor!.txHash)
      const upper = await main.get(`0x${anchor!.txHash.slice(2).toUpperCase()}`)
      const qr = await main.get(txHashToBase64Url(anchor!.txHash))
      expect(lower.statusCode).toBe(200)
      expect(lower.json().encryptedPayload).toBeNull()
      expect(upper.body).toBe(lower.body)
      expect(qr.body).toBe(lower.body)
      expect(qr.headers.etag).toBe(lower.headers.etag)
    })

    it('answers 304 to a current If-None-Match', async () => {
      const [anchor] = await anchorChain(testChain, 1)
      const { etag } = (await main.get(anchor!.txHash)).headers as { etag: string }
      for (const header of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
        const response = await main.get(anchor!.txHash, { 'if-none-match': header })
        expect(response.statusCode).toBe(304)
        expect(response.body).toBe('')
        expect(response.headers.etag).toBe(etag)
        expect(response.headers['cache-control']).toBe('public, max-age=60')
      }
      expect((await main.get(anchor!.txHash, { 'if-none-match': '"other"' })).statusCode).toBe(200)
    })
  })

  describe('what caches in front may do with an answer', () => {
    it('gives the seconds of freshness left as max-age, so no cache keeps an answer past the service’s lifetime', async () => {
      const twoSeconds = await verifyApp({ VERIFY_CACHE_TTL_SECONDS: '2' })
      const [anchor] = await anchorChain(testChain, 1)
      const first = await twoSeconds.get(anchor!.txHash)
      expect(first.headers['cache-control']).toBe('public, max-age=2')
      // Halfway between what rounds to 2 and to 0 left, so that a slow machine still sees 1.
      await sleep(1_000)
      // The same result, held since the walk: one second of it is left, whoever asks.
      const later = await twoSeconds.get(anchor!.txHash)
      expect(later.body).toBe(first.body)
      expect(later.headers['cache-control']).toBe('public, max-age=1')
      const revalidated = await twoSeconds.get(anchor!.txHash, { 'if-none-match': first.headers.etag as string })
      expect(revalidated.statusCode).toBe(304)
      expect(revalidated.headers['cache-control']).toBe('public, max-age=1')
    })

    it('lets every origin read every answer, with no Vary on Origin, whatever CORS_ORIGINS allows elsewhere', async () => {
      const restricted = await verifyApp({ CORS_ORIGINS: 'https://verify.example', VERIFY_PER_IP_PER_MINUTE: '3' })
      const [anchor] = await anchorChain(testChain, 1)
      const answers = [
        await restricted.get(anchor!.txHash, { origin: 'https://third-party.example' }),
        await restricted.get(anchor!.txHash),
        await restricted.get(randomHash(), { origin: 'https://verify.example' }),
        await restricted.get(randomHash(), { origin: 'https://third-party.example' }),
      ]
      expect(answers.map((answer) => answer.statusCode)).toEqual([200, 200, 404, 429])
      for (const answer of answers) {
        expect(answer.headers['access-control-allow-origin']).toBe('*')
        expect(answer.headers.vary).toBeUndefined()
        expect(answer.headers['access-control-expose-headers']).toBe('etag, retry-after')
        expect(answer.headers['x-content-type-options']).toBe('nosniff')
      }
      // Routes that read credentials keep the configured policy.
      const info = await restricted.t.app.inject({
        url: '/api/info',
        headers: { origin: 'https://third-party.example' },
      })
      expect(info.headers['access-control-allow-origin']).toBeUndefined()
      expect(info.headers.vary).toBe('Origin')
    })
  })

  describe('the cache', () => {
    it('makes no RPC call for a second request within the lifetime', async () => {
      const anchored = await anchorChain(testChain, 5)
      await main.index(anchored)
      const hits = await metric(main, 'verify_cache_hits_total')
      const first = await main.get(anchored[4]!.txHash)
      expect(main.proxy.roundTrips()).toHaveLength(1)
      main.proxy.reset()
      const second = await main.get(anchored[4]!.txHash)
      expect(main.proxy.requests).toEqual([])
      expect(second.body).toBe(first.body)
      expect(await metric(main, 'verify_cache_hits_total')).toBe(hits + 1)
    })

    it('makes one walk for 100 concurrent misses of the same hash', async () => {
      const anchored = await anchorChain(testChain, 10)
      await main.index(anchored)
      const misses = await metric(main, 'verify_cache_misses_total')
      const walks = await metric(main, 'verify_walks_total')
      main.proxy.reset()
      const responses = await Promise.all(Array.from({ length: 100 }, () => main.get(anchored[9]!.txHash)))
      expect(responses.every((response) => response.statusCode === 200)).toBe(true)
      expect(new Set(responses.map((response) => response.body)).size).toBe(1)
      expect(await metric(main, 'verify_walks_total')).toBe(walks + 1)
      expect(main.proxy.roundTrips()).toHaveLength(1)
      expect(receiptCalls(main)).toHaveLength(10)
      expect(await metric(main, 'verify_cache_misses_total')).toBe(misses + 100)
    })

    it('serves fresh data once a result has expired', async () => {
      const short = await tuned()
      const [root] = await anchorChain(testChain, 1)
      await short.index([root!])
      const before = await short.get(root!.txHash)
      expect(before.headers['cache-control']).toBe('public, max-age=1')
      expect(before.json().successors).toEqual([])

      const later = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
      await short.index(later)
      await sleep(1_100)
      const after = await short.get(root!.txHash)
      expect(after.json().successors).toEqual(await chainFromLogs(testChain, later[0]!.txHash).then((c) => c.slice(1)))
      expect(after.headers.etag).not.toBe(before.headers.etag)
    })
  })

  describe('what is not verifiable', () => {
    it.each([
      ['too short', `0x${'a'.repeat(63)}`],
      ['too long', `0x${'a'.repeat(65)}`],
      ['not hex', `0x${'g'.repeat(64)}`],
      ['without 0x', 'a'.repeat(64)],
      ['42 base64url characters', 'A'.repeat(42)],
      ['a non-canonical base64url tail', `${'A'.repeat(42)}B`],
      ['base64 with padding', `${'A'.repeat(42)}=`],
    ])('returns 400 VALIDATION_FAILED for an id %s', async (_case, id) => {
      const response = await main.get(encodeURIComponent(id))
      expect(response.statusCode).toBe(400)
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'params.txHash' }] })
    })

    it('returns 404 ANCHOR_NOT_FOUND for a plain transfer, an unknown hash and another contract’s event', async () => {
      const other = await createLookAlikeAnchor()
      for (const hash of [await sendPlainTransfer(testChain), randomHash(), other]) {
        const response = await main.get(hash)
        expect(response.statusCode).toBe(404)
        expect(response.headers['content-type']).toContain('application/problem+json')
        expect(response.headers['cache-control']).toBe('public, max-age=5')
        expect(response.json()).toMatchObject({ status: 404, code: 'ANCHOR_NOT_FOUND' })
      }
    })

    it('remembers "not found" briefly, and lets a client keep it only for what is left of that', async () => {
      const hash = randomHash()
      expect((await main.get(hash)).statusCode).toBe(404)
      expect(main.proxy.roundTrips()).toHaveLength(1)
      await new Promise((resolve) => setTimeout(resolve, 1_700))
      const again = await main.get(hash)
      expect(again.statusCode).toBe(404)
      expect(main.proxy.roundTrips()).toHaveLength(1)
      const maxAge = Number(/max-age=(\d+)/.exec(String(again.headers['cache-control']))?.[1])
      expect(maxAge).toBeGreaterThanOrEqual(2)
      expect(maxAge).toBeLessThanOrEqual(4)
    })

    it('returns 422 CHAIN_TOO_DEEP past the maximum depth', async () => {
      const shallow = await tuned()
      const anchored = await anchorChain(testChain, 6)
      expect((await shallow.get(anchored[4]!.txHash)).statusCode).toBe(200)
      const response = await shallow.get(anchored[5]!.txHash)
      expect(response.statusCode).toBe(422)
      expect(response.json()).toMatchObject({ code: 'CHAIN_TOO_DEEP' })
    })

    async function createLookAlikeAnchor(): Promise<Hash> {
      const { deployDocumentAnchors } = await import('../../src/chain/deploy-document-anchors.ts')
      const lookAlike = await deployDocumentAnchors(testChain.walletClient(0), testChain.publicClient, {
        relayers: [testChain.account(0).address],
      })
      const [anchor] = await anchorChain(testChain, 1, { contract: lookAlike })
      await main.index([anchor!])
      return anchor!.txHash
    }
  })

  describe('when the chain is unreachable', () => {
    it('returns 502 CHAIN_UNAVAILABLE without naming the RPC', async () => {
      main.proxy.down = true
      try {
        const response = await main.get(randomHash())
        expect(response.statusCode).toBe(502)
        expect(response.json()).toEqual({
          type: 'about:blank',
          title: 'Bad Gateway',
          status: 502,
          code: 'CHAIN_UNAVAILABLE',
          detail: 'The blockchain could not be reached; try again later',
        })
        expect(response.body).not.toContain('127.0.0.1')
      } finally {
        main.proxy.down = false
      }
    })

    it('serves an expired verified result instead, but never an expired "not found"', async () => {
      const short = await tuned()
      const [anchor] = await anchorChain(testChain, 1)
      const unknown = randomHash()
      const fresh = await short.get(anchor!.txHash)
      expect((await short.get(unknown)).statusCode).toBe(404)
      await sleep(1_100)
      short.proxy.down = true
      try {
        const stale = await short.get(anchor!.txHash)
        expect(stale.statusCode).toBe(200)
        expect(stale.body).toBe(fresh.body)
        expect(stale.headers['cache-control']).toBe('public, max-age=0')
        expect(await metric(short, 'verify_stale_served_total')).toBe(1)
        expect((await short.get(unknown)).statusCode).toBe(502)
      } finally {
        short.proxy.down = false
      }
    })
  })

  describe('rate limit', () => {
    it('answers 429 RATE_LIMITED with Retry-After past the per-IP limit', async () => {
      const limited = await verifyApp({ VERIFY_PER_IP_PER_MINUTE: '3' })
      const hash = randomHash()
      for (let i = 0; i < 3; i++) expect((await limited.get(hash)).statusCode).toBe(404)
      const response = await limited.get(hash)
      expect(response.statusCode).toBe(429)
      expect(Number(response.headers['retry-after'])).toBeGreaterThan(0)
      expect(response.headers['content-type']).toContain('application/problem+json')
      expect(response.json()).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
      // Other routes are not counted against it.
      expect((await limited.t.app.inject('/api/info')).statusCode).toBe(200)
    })

    it('counts an IPv6 client by its /64 and an IPv4-mapped address as its IPv4 address', async () => {
      const limited = await verifyApp({ VERIFY_PER_IP_PER_MINUTE: '2' })
      const hash = randomHash()
      const from = (remoteAddress: string) =>
        limited.t.app.inject({ method: 'GET', url: `/api/verify/${hash}`, remoteAddress })
      expect((await from('2001:db8:1:2::1')).statusCode).toBe(404)
      expect((await from('2001:db8:1:2:ffff::9')).statusCode).toBe(404)
      expect((await from('2001:db8:1:2:aaaa::5')).statusCode).toBe(429)
      // Another /64 has counters of its own.
      expect((await from('2001:db8:1:3::1')).statusCode).toBe(404)
      expect((await from('192.0.2.7')).statusCode).toBe(404)
      expect((await from('::ffff:192.0.2.7')).statusCode).toBe(404)
      expect((await from('192.0.2.7')).statusCode).toBe(429)
      expect((await from('192.0.2.8')).statusCode).toBe(404)
    })
  })

  it('is documented in the OpenAPI document', async () => {
    const document = (await main.t.app.inject('/openapi.json')).json()
    const operation = document.paths['/api/verify/{txHash}'].get
    expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '304', '400', '404', '429', '502']))
    expect(operation.responses['200'].content['application/json'].schema.properties).toHaveProperty('successors')
  })
})
