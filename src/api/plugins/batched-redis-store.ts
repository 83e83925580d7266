// A rate limit's count shared through Redis without a round trip per request, for a hot path: each instance counts in
// memory, adds what it counted to Redis at most every `syncIntervalMs` in one transaction, and learns the total of
// every instance from the replies. A request is decided at once on what the instance knows: its own requests exactly,
// the others' as of its own last sync, so that each instance may let an address through about one interval's worth
// of requests past the limit. Windows are fixed and aligned to the clock, so every instance counts a window under the
// same key. A count is sent at most once: one whose sync failed (Redis away, a timeout, a dropped connection, after
// which Redis may or may not have applied it) stays in this instance's memory only. So the limit fails open, as a
// limit with a bound of its own may, yet still holds per instance while Redis is away.
import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'

interface WindowCount {
  /** The window's key in Redis. */
  redisKey: string
  window: number
  /** The total of every instance as Redis last answered, this instance's synced requests included. */
  shared: number
  /** This instance's requests not yet sent to Redis. */
  pending: number
  /** This instance's requests whose sync failed: counted here, never sent again. */
  unshared: number
}

/** Sync intervals between two attempts after one failed (Redis away): each attempt builds a transaction. */
const RETRY_INTERVALS = 10

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void

export interface BatchedRedisStoreOptions {
  /** A client with a command timeout (the app's has one): a sync in flight holds the next until it settles. */
  redis: Redis
  /** Prepended to every key; a key ends with its window's number. */
  prefix: string
  timeWindowMs: number
  syncIntervalMs: number
  /** Keys held in memory; the least recently counted go first. */
  maxEntries: number
}

export class BatchedRedisStore {
  readonly #options: BatchedRedisStoreOptions
  readonly #counts: LRUCache<string, WindowCount>
  /** Counts with requests Redis has not been sent yet, by their Redis key: a window's count until its own sync. */
  #unsynced = new Map<string, WindowCount>()
  #timer: NodeJS.Timeout | undefined
  #syncing = false
  #closed = false

  constructor(options: BatchedRedisStoreOptions) {
    this.#options = options
    this.#counts = new LRUCache({ max: options.maxEntries })
  }

  /** The shape of @fastify/rate-limit's stores; answers synchronously. */
  incr(key: string, callback: IncrCallback): void {
    const { prefix, timeWindowMs } = this.#options
    const now = Date.now()
    const window = Math.floor(now / timeWindowMs)
    let count = this.#counts.get(key)
    if (count === undefined || count.window !== window) {
      count = { redisKey: `${prefix}${key}:${window}`, window, shared: 0, pending: 0, unshared: 0 }
      this.#counts.set(key, count)
    }
    count.pending += 1
    this.#unsynced.set(count.redisKey, count)
    this.#schedule(this.#options.syncIntervalMs)
    const current = count.shared + count.pending + count.unshared
    callback(null, { current, ttl: (window + 1) * timeWindowMs - now })
  }

  /** Stops syncing (the app is closing); counts not yet synced are dropped with the instance. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#unsynced.clear()
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || this.#syncing || this.#closed) return
    this.#timer = setTimeout(() => void this.#sync(), delayMs)
    this.#timer.unref()
  }

  async #sync(): Promise<void> {
    this.#timer = undefined
    this.#syncing = true
    const batch = [...this.#unsynced.values()].map((count) => ({ count, sent: count.pending }))
    this.#unsynced = new Map()
    const transaction = this.#options.redis.multi()
    for (const { count, sent } of batch) {
      transaction.incrby(count.redisKey, sent)
      // Two windows: a key outlives its own whatever the instances' clocks disagree by. In the same transaction as
      // the increment, so that no key is left without an expiry.
      transaction.pexpire(count.redisKey, 2 * this.#options.timeWindowMs)
    }
    const replies = await transaction.exec().catch(() => null)
    let failed = false
    for (const [i, { count, sent }] of batch.entries()) {
      const [error, total] = replies?.[2 * i] ?? [new Error('no reply')]
      count.pending -= sent
      if (error === null && typeof total === 'number') {
        count.shared = total
      } else {
        failed = true
        count.unshared += sent
      }
    }
    this.#syncing = false
    if (this.#unsynced.size > 0) {
      this.#schedule(failed ? RETRY_INTERVALS * this.#options.syncIntervalMs : this.#options.syncIntervalMs)
    }
  }
}
