import { randomUUID } from 'node:crypto'
import { Redis } from 'ioredis'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { RedisResultCache } from '../../src/verify/redis-result-cache.ts'
import { type CachedResult, LruResultCache } from '../../src/verify/result-cache.ts'
import { TieredResultCache } from '../../src/verify/tiered-result-cache.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { clearOfWindowEdge } from '../helpers/fixed-window.ts'
import { anchorChain, indexAnchors } from './helpers/anchors.ts'

const REDIS_URL = 'redis://127.0.0.1:6379'
// Unique per run, so parallel runs on a shared Redis never see each other's keys; removed afterwards.
const PREFIX = `test:verify:${randomUUID()}:`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe('verify cache in Redis', () => {
  let redis: Redis

  beforeAll(() => {
    redis = new Redis(REDIS_URL)
  })
  afterAll(async () => {
    const keys = await redis.keys(`${PREFIX}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })

  describe('RedisResultCache', () => {
    const result: CachedResult = {
      outcome: 'verified',
      body: '{"txHash":"0xab","note":"line\\nbreak and ünïcode\n raw newline"}',
      etag: '"abc_-123"',
      freshUntil: 1_760_000_000_123,
    }

    it('returns what was stored, body byte for byte', async () => {
      const cache = new RedisResultCache(redis, `${PREFIX}unit:`)
      await cache.set('0x01', result, 60_000)
      expect(await cache.get('0x01')).toEqual(result)
      expect(await cache.get('0x02')).toBeUndefined()
    })

    it('returns a remembered failure with its message', async () => {
      const cache = new RedisResultCache(redis, `${PREFIX}unit:`)
      const failure: CachedResult = {
        outcome: 'ERR_ANCHOR_NOT_FOUND',
        detail: 'holds no anchor\nof this contract',
        freshUntil: 5,
      }
      await cache.set('0x05', failure, 60_000)
      expect(await cache.get('0x05')).toEqual(failure)
    })

    it('forgets an entry after its retention time', async () => {
      const cache = new RedisResultCache(redis, `${PREFIX}unit:`)
      await cache.set('0x03', result, 50)
      await sleep(150)
      expect(await cache.get('0x03')).toBeUndefined()
    })

    it('keeps deployments apart by prefix', async () => {
      await new RedisResultCache(redis, `${PREFIX}a:`).set('0x04', result, 60_000)
      expect(await new RedisResultCache(redis, `${PREFIX}b:`).get('0x04')).toBeUndefined()
    })
  })

  describe('TieredResultCache (this instance’s copy in front of Redis)', () => {
    let clock = 1_000_000
    const now = () => clock
    const verified = (body: string, freshUntil: number): CachedResult => ({
      outcome: 'verified',
      body,
      etag: `"${body}"`,
      freshUntil,
    })
    const tiered = (prefix: string) =>
      new TieredResultCache(new LruResultCache(100), new RedisResultCache(redis, `${PREFIX}${prefix}`), {
        maxCopyMs: 120_000,
        now,
      })

    it('holds what it writes, in Redis too, and a result another instance wrote once it has read it', async () => {
      const [a, b] = [tiered('tier1:'), tiered('tier1:')]
      await a.set('0x01', verified('one', clock + 60_000), 60_000)
      expect(a.peek('0x01')).toMatchObject({ body: 'one' })
      expect(await redis.exists(`${PREFIX}tier1:0x01`)).toBe(1)
      expect(b.peek('0x01')).toBeUndefined()
      expect(await b.get('0x01')).toMatchObject({ body: 'one' })
      expect(b.peek('0x01')).toMatchObject({ body: 'one' })
    })

    it('serves its copy only until the fresh time its writer gave it, then asks Redis again', async () => {
      const [a, b] = [tiered('tier2:'), tiered('tier2:')]
      await a.set('0x02', verified('old', clock + 1_000), 60_000)
      await b.get('0x02')
      // Another instance refreshes the result in Redis; b's copy stays the answer while it is fresh.
      await a.set('0x02', verified('new', clock + 61_000), 60_000)
      expect(await b.get('0x02')).toMatchObject({ body: 'old' })
      clock += 1_000
      expect(await b.get('0x02')).toMatchObject({ body: 'new' })
    })

    it('holds a copy read from Redis no longer than its own cache time, whatever the entry claims', async () => {
      const writer = tiered('tier4:')
      const reader = new TieredResultCache(new LruResultCache(100), new RedisResultCache(redis, `${PREFIX}tier4:`), {
        maxCopyMs: 50,
        now,
      })
      await writer.set('0x04', verified('far', clock + 86_400_000), 60_000)
      await reader.get('0x04')
      expect(reader.peek('0x04')).toMatchObject({ body: 'far' })
      await sleep(80)
      expect(reader.peek('0x04')).toBeUndefined()
    })

    it('serves an expired copy as the stale fallback while Redis fails, and fails with nothing held', async () => {
      const failing = {
        get: () => Promise.reject(new Error('Redis is down')),
        set: async () => {},
        delete: async () => {},
      }
      const cache = new TieredResultCache(new LruResultCache(100), failing, { maxCopyMs: 60_000, now })
      await cache.set('0x05', verified('kept', clock + 1_000), 60_000)
      clock += 5_000
      expect(await cache.get('0x05')).toMatchObject({ body: 'kept' })
      await expect(cache.get('0x06')).rejects.toThrow('Redis is down')
    })

    it('keeps an expired copy as the stale fallback when Redis holds nothing', async () => {
      const cache = tiered('tier3:')
      await cache.set('0x03', verified('kept', clock + 1_000), 60_000)
      await redis.del(`${PREFIX}tier3:0x03`)
      clock += 5_000
      expect(await cache.get('0x03')).toMatchObject({ body: 'kept', freshUntil: clock - 4_000 })
    })
  })

  describe('GET /api/verify/:txHash with REDIS_URL', () => {
    let testChain: TestChain
    const instances: { t: TestApp; proxy: RpcProxy }[] = []

    async function instance(env: Record<string, string>) {
      const proxy = await startRpcProxy(testChain.rpcUrl)
      const t = await createTestApp({ env, testChain: { ...testChain, rpcUrl: proxy.url } })
      instances.push({ t, proxy })
      return { t, proxy }
    }

    beforeAll(async () => {
      testChain = await startTestChain()
    })
    afterAll(async () => {
      for (const { t, proxy } of instances) {
        await t.close()
        await proxy.close()
      }
      await testChain?.stop()
    })

    it('shares results and, a sync interval late, the rate limit between instances', async () => {
      const env = { REDIS_URL, VERIFY_REDIS_KEY_PREFIX: `${PREFIX}app:`, VERIFY_PER_IP_PER_MINUTE: '4' }
      const [a, b] = await Promise.all([instance(env), instance(env)])
      const anchored = await anchorChain(testChain, 3)
      await indexAnchors(a.t.database.handle.db, testChain, anchored)
      const url = `/api/verify/${anchored[2]!.txHash}`
      // The per-IP limit counts a minute aligned to the clock.
      await clearOfWindowEdge(60_000)

      const first = await a.t.app.inject(url)
      expect(first.statusCode).toBe(200)
      expect(a.proxy.roundTrips()).toHaveLength(1)
      const second = await b.t.app.inject(url)
      expect(second.statusCode).toBe(200)
      // Instance b has no row for it: the payload in its answer can only have come from the shared cache.
      expect(second.body).toBe(first.body)
      expect(second.json().encryptedPayload).not.toBeNull()
      expect(b.proxy.roundTrips()).toHaveLength(0)
      expect(second.headers.etag).toBe(first.headers.etag)

      expect((await a.t.app.inject(url)).statusCode).toBe(200)
      expect((await b.t.app.inject(url)).statusCode).toBe(200)
      // Each instance adds its count to Redis every 100 ms (the verify route's PER_IP_SYNC_MS) and learns the fleet's
      // total from the reply to its own sync. Its own requests alone (four at most here) never pass the limit of 4.
      const window = Math.floor(Date.now() / 60_000)
      const counted = () => redis.get(`anchor:rate:${PREFIX}app:ip:127.0.0.1:${window}`)
      await expect.poll(counted).toBe('4')
      // Refused already if a synced after b did; counted either way, and a's sync then brings it the total.
      await a.t.app.inject(url)
      await expect.poll(counted).toBe('5')
      // The reply to a's sync travelled on a's own connection: a moment for it to be taken in.
      await new Promise((resolve) => setTimeout(resolve, 50))
      const limited = await a.t.app.inject(url)
      expect(limited.statusCode).toBe(429)
      expect(limited.json()).toMatchObject({ code: 'RATE_LIMITED' })
    })

    it('keeps verifying while Redis is unreachable', async () => {
      const { t } = await instance({ REDIS_URL: 'redis://127.0.0.1:1', VERIFY_REDIS_KEY_PREFIX: `${PREFIX}down:` })
      const [anchor] = await anchorChain(testChain, 1)
      const response = await t.app.inject(`/api/verify/${anchor!.txHash}`)
      expect(response.statusCode).toBe(200)
      expect(response.json().chain).toHaveLength(1)
    })
  })
})
