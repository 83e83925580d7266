// A rate limit's count shared through Redis without a round trip per request, for a hot path: each instance counts in
// memory, adds what it counted to Redis at most every `syncIntervalMs` in one pipeline, and learns the total of every
// instance from the same replies. A request is decided at once on what the instance knows: its own requests exactly,
// the other instances' as of its last sync (theirs and its own: up to two intervals late), so that together they may
// let through a few intervals' worth of requests more than the limit. Windows are fixed and aligned to the clock, so every instance counts a window under the same
// key. While Redis fails, the counts stay in memory and go with the next sync: the limit still holds per instance.
import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'

interface WindowCount {
  window: number
  /** The total of every instance as Redis last answered, this instance's synced requests included. */
  shared: number
  /** This instance's requests not yet added to Redis. */
  pending: number
}

/** Sync intervals between two attempts while Redis fails. */
const RETRY_INTERVALS = 10

type IncrCallback = (error: Error | null, result?: { current: number; ttl: number }) => void

export interface BatchedRedisStoreOptions {
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
  /** The counts with requests Redis has not seen yet, by key. */
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
    const { timeWindowMs } = this.#options
    const now = Date.now()
    const window = Math.floor(now / timeWindowMs)
    let count = this.#counts.get(key)
    if (count === undefined || count.window !== window) {
      count = { window, shared: 0, pending: 0 }
      this.#counts.set(key, count)
    }
    count.pending += 1
    this.#unsynced.set(key, count)
    this.#schedule()
    callback(null, { current: count.shared + count.pending, ttl: (window + 1) * timeWindowMs - now })
  }

  /** Stops syncing (the app is closing); counts not yet synced are dropped with the instance. */
  close(): void {
    this.#closed = true
    clearTimeout(this.#timer)
    this.#timer = undefined
    this.#unsynced.clear()
  }

  #schedule(delayMs = this.#options.syncIntervalMs): void {
    if (this.#timer !== undefined || this.#syncing || this.#closed) return
    this.#timer = setTimeout(() => void this.#sync(), delayMs)
    this.#timer.unref()
  }

  async #sync(): Promise<void> {
    this.#timer = undefined
    this.#syncing = true
    const batch = [...this.#unsynced].map(([key, count]) => ({ key, count, sent: count.pending }))
    this.#unsynced = new Map()
    const { redis, prefix, timeWindowMs } = this.#options
    const pipeline = redis.pipeline()
    for (const { key, count, sent } of batch) {
      const redisKey = `${prefix}${key}:${count.window}`
      pipeline.incrby(redisKey, sent)
      // Two windows: a key outlives its own whatever the instances' clocks disagree by.
      pipeline.pexpire(redisKey, 2 * timeWindowMs)
    }
    const replies = await pipeline.exec().catch(() => null)
    const window = Math.floor(Date.now() / timeWindowMs)
    let failed = false
    for (const [i, { key, count, sent }] of batch.entries()) {
      const [error, total] = replies?.[2 * i] ?? [new Error('no reply')]
      if (error === null && typeof total === 'number') {
        count.pending -= sent
        count.shared = total
      } else if (count.window === window && this.#counts.peek(key) === count) {
        // Not synced: sent again with the next sync, while its window lasts and is still this key's in memory.
        failed = true
        this.#unsynced.set(key, count)
      }
    }
    this.#syncing = false
    // While Redis fails, retries come ten times less often: each one carries every count still unsynced.
    if (this.#unsynced.size > 0) this.#schedule(failed ? RETRY_INTERVALS * this.#options.syncIntervalMs : undefined)
  }
}
