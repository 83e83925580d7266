// The batched count of a hot path's rate limit, against the local Redis: decided at once from memory, shared with
// the other instances through Redis one sync interval late, windows aligned to the clock, and still counting while
// Redis is unreachable.
import { randomUUID } from 'node:crypto'
import { setTimeout as sleep } from 'node:timers/promises'
import { Redis } from 'ioredis'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { BatchedRedisStore, type BatchedRedisStoreOptions } from '../../src/api/plugins/batched-redis-store.ts'
import { clearOfWindowEdge } from '../helpers/fixed-window.ts'

const REDIS_URL = 'redis://127.0.0.1:6379'
const SYNC_MS = 30
// Unique per run, so parallel runs on a shared Redis never see each other's keys; removed afterwards.
const PREFIX = `test:rate:${randomUUID()}:`

describe('BatchedRedisStore', () => {
  let redis: Redis
  const stores: BatchedRedisStore[] = []

  beforeAll(() => {
    redis = new Redis(REDIS_URL, { enableAutoPipelining: true })
  })
  afterEach(() => {
    for (const store of stores.splice(0)) store.close()
  })
  afterAll(async () => {
    const keys = await redis.keys(`${PREFIX}*`)
    if (keys.length > 0) await redis.del(...keys)
    await redis.quit()
  })

  function store(options: Partial<BatchedRedisStoreOptions> = {}) {
    const made = new BatchedRedisStore({
      redis,
      prefix: PREFIX,
      timeWindowMs: 60_000,
      syncIntervalMs: SYNC_MS,
      maxEntries: 100,
      ...options,
    })
    stores.push(made)
    return made
  }

  /** The count `store` answers for one more request of `key`, answered synchronously. */
  function count(on: BatchedRedisStore, key: string): { current: number; ttl: number } {
    let answer: { current: number; ttl: number } | undefined
    on.incr(key, (error, result) => {
      expect(error).toBeNull()
      answer = result
    })
    if (answer === undefined) throw new Error('the store did not answer synchronously')
    return answer
  }

  it('answers from memory at once, and learns the other instances’ requests from its next sync', async () => {
    const key = `shared-${randomUUID()}`
    const [a, b] = [store(), store()]
    await clearOfWindowEdge(60_000)
    // Read on the stores' own connection: a sync's reply has been taken in before a later read's.
    const total = () => redis.get(`${PREFIX}${key}:${Math.floor(Date.now() / 60_000)}`)
    expect([count(a, key).current, count(a, key).current, count(a, key).current]).toEqual([1, 2, 3])
    await expect.poll(total).toBe('3')
    // Until it has synced, b knows only its own request; then a's three too.
    expect(count(b, key).current).toBe(1)
    await expect.poll(total).toBe('4')
    expect(count(b, key).current).toBe(5)
    // a has not synced since b did: it learns of b's requests with its next sync.
    expect(count(a, key).current).toBe(4)
    await expect.poll(total).toBe('6')
  })

  it('counts each key and each window apart, and gives each window’s key an expiry', async () => {
    const timeWindowMs = 400
    const on = store({ timeWindowMs })
    const [key, other] = [`window-${randomUUID()}`, `other-${randomUUID()}`]
    // Well inside one window, so that two requests fall in the same one.
    await clearOfWindowEdge(timeWindowMs, timeWindowMs - 50)
    const windowKey = `${PREFIX}${key}:${Math.floor(Date.now() / timeWindowMs)}`
    count(on, key)
    const second = count(on, key)
    expect(second.current).toBe(2)
    expect(second.ttl).toBeGreaterThan(0)
    expect(second.ttl).toBeLessThanOrEqual(timeWindowMs)
    expect(count(on, other).current).toBe(1)
    await expect.poll(() => redis.get(windowKey)).toBe('2')
    const ttl = await redis.pttl(windowKey)
    expect(ttl).toBeGreaterThan(0)
    expect(ttl).toBeLessThanOrEqual(2 * timeWindowMs)
    await sleep(timeWindowMs)
    expect(count(on, key).current).toBe(1)
  })

  it('keeps counting in memory while Redis is unreachable', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      lazyConnect: true,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    })
    down.on('error', () => {})
    try {
      const on = store({ redis: down })
      const key = `down-${randomUUID()}`
      count(on, key)
      await sleep(SYNC_MS * 4)
      expect(count(on, key).current).toBe(2)
      // Past the next attempt, ten intervals after the failed one.
      await sleep(SYNC_MS * 12)
      expect(count(on, key).current).toBe(3)
    } finally {
      down.disconnect()
    }
  })

  it('never sends a count twice: one whose sync failed counts in memory only, and later ones reach Redis', async () => {
    // Not connected until its first command, which, without an offline queue, fails: so does the first sync.
    const later = new Redis(REDIS_URL, { lazyConnect: true, enableOfflineQueue: false })
    try {
      const on = store({ redis: later })
      const key = `later-${randomUUID()}`
      await clearOfWindowEdge(60_000, 5_000)
      const windowKey = `${PREFIX}${key}:${Math.floor(Date.now() / 60_000)}`
      count(on, key)
      count(on, key)
      await sleep(SYNC_MS * 4)
      expect(await redis.get(windowKey)).toBeNull()
      expect(count(on, key).current).toBe(3)
      // Read on the store's own connection: the sync's reply has been taken in before this read's.
      await expect.poll(() => later.get(windowKey), { timeout: 10_000 }).toBe('1')
      expect(count(on, key).current).toBe(4)
    } finally {
      later.disconnect()
    }
  })

  it('stops syncing once closed', async () => {
    const on = store()
    const key = `closed-${randomUUID()}`
    count(on, key)
    on.close()
    await sleep(SYNC_MS * 4)
    expect(await redis.get(`${PREFIX}${key}:${Math.floor(Date.now() / 60_000)}`)).toBeNull()
  })
})
