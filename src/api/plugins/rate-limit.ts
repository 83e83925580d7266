// The app's rate limits: counters in @fastify/rate-limit's own stores, in memory, or in Redis when REDIS_URL is set
// (every instance counts together; a hot path's limit may count in memory and sync with Redis in batches, see
// batched-redis-store.ts); and the one way a limit answers, 429 RATE_LIMITED with Retry-After. Limits are
// made with `app.limiter(...)` and used as a route's onRequest hook (`limit.onRequest`) or called from a handler.
// The stores are called directly rather than through the library's `createRateLimit`, which is async: a check held
// in memory then completes synchronously, with no promise on the hot path of a cached verification.
import type { FastifyRateLimitStore } from '@fastify/rate-limit'
import { normalizeIP } from '@fastify/rate-limit'
import LocalStore from '@fastify/rate-limit/store/LocalStore.js'
import RedisStore from '@fastify/rate-limit/store/RedisStore.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'
import { BatchedRedisStore } from './batched-redis-store.ts'

export interface LimitOptions {
  /** Names the limit's counters (and Redis keys): two limits never share one. */
  name: string
  max: number
  timeWindowMs: number
  /** The 429's detail reads "Too many <what>; try again later". */
  what: string
  /** Whose requests count together; the client's address by default (an IPv6 client's whole /64). */
  key?: (request: FastifyRequest, subject: string | undefined) => string
  /**
   * Set: while the store fails, requests are refused with 503 NOT_READY and this detail (fail closed, where an open
   * door invites guessing). Unset: they pass uncounted, as what the limit protects has its own bound.
   */
  failClosedDetail?: string
  /**
   * With Redis only, for a hot path's limit that fails open: each instance counts in memory and adds its count to
   * Redis every this many milliseconds (batched-redis-store.ts), instead of a Redis round trip for every request. Each
   * instance then knows the others' requests as of its own last sync.
   */
  syncIntervalMs?: number
}

export interface Limit {
  /** Counts one request (with `subject` for limits keyed by something the request carries); rejects past the limit. */
  (request: FastifyRequest, subject?: string): Promise<void>
  /** The same count as a route's onRequest hook: synchronous while the counters are in memory. */
  onRequest(request: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void): void
}

declare module 'fastify' {
  interface FastifyInstance {
    limiter(options: LimitOptions): Limit
  }
}

const REDIS_PREFIX = 'anchor:rate:'

/** What a limit counts with: @fastify/rate-limit's stores, or the batched one. */
type CountStore = Pick<FastifyRateLimitStore, 'incr'>

/** Keys of the in-memory store; an attacker cycling addresses must not evict the counters of real clients. */
const LOCAL_STORE_ENTRIES = 100_000

/** An IPv4 address is its own key; the library's normalization tests every address against an IPv6 pattern first. */
const clientAddress = ({ ip }: FastifyRequest): string => (ip.includes(':') ? normalizeIP(ip, 64) : ip)

export const rateLimitPlugin = fp(
  async (app: AppInstance) => {
    const { redis } = app.deps
    // One Redis store for every limit (keys carry the limit's name); in memory, each limit gets a store of its own, so
    // that a flood on one never evicts another's counters. No continued or growing windows: a plain fixed window.
    const redisStore = redis && new RedisStore(false, false, redis, REDIS_PREFIX)
    const batchedStores: BatchedRedisStore[] = []
    app.addHook('onClose', async () => {
      for (const store of batchedStores) store.close()
    })
    const storeFor = ({ name, timeWindowMs, failClosedDetail, syncIntervalMs }: LimitOptions): CountStore => {
      if (redis === undefined || redisStore === undefined) return new LocalStore(false, false, LOCAL_STORE_ENTRIES)
      if (syncIntervalMs === undefined) return redisStore
      // Such a limit never sees a store failure to fail closed on.
      if (failClosedDetail !== undefined) throw new Error(`The limit ${name} fails closed and cannot be batched`)
      const batched = new BatchedRedisStore({
        redis,
        prefix: REDIS_PREFIX,
        timeWindowMs,
        syncIntervalMs,
        maxEntries: LOCAL_STORE_ENTRIES,
      })
      batchedStores.push(batched)
      return batched
    }

    app.decorate('limiter', (options: LimitOptions): Limit => {
      const { name, max, timeWindowMs, what, key = clientAddress, failClosedDetail } = options
      const store = storeFor(options)
      const tooMany = `Too many ${what}; try again later`

      /** Calls `done` with nothing, or with the error the request is answered with. */
      const count = (requestKey: string, done: (error?: Error) => void) => {
        store.incr(
          `${name}:${requestKey}`,
          (error, result) => {
            if (error || result === undefined) {
              // Only a limit that fails closed lets a store failure through; the others pass uncounted.
              if (failClosedDetail === undefined) done()
              else done(new ProblemError(503, 'NOT_READY', failClosedDetail, { cause: error }))
            } else if (result.current > max) {
              const retryAfter = String(Math.max(1, Math.ceil(result.ttl / 1000)))
              done(new ProblemError(429, 'RATE_LIMITED', tooMany, { headers: { 'retry-after': retryAfter } }))
            } else {
              done()
            }
          },
          timeWindowMs,
          max,
        )
      }
      const limit = (request: FastifyRequest, subject?: string) =>
        new Promise<void>((resolve, reject) =>
          count(key(request, subject), (error) => (error ? reject(error) : resolve())),
        )
      return Object.assign(limit, {
        onRequest: (request: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) =>
          count(key(request, undefined), done),
      })
    })
  },
  { name: 'rate-limit' },
)
