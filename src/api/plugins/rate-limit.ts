// The one registration of @fastify/rate-limit: counters in memory, or in Redis when REDIS_URL is set (every instance
// counts together); and the one way a limit answers, 429 RATE_LIMITED with Retry-After. Limits are made with
// `app.limiter(...)` and used as a route's onRequest or preHandler hook, or called from a handler.
import rateLimit, { type CreateRateLimitOptions, normalizeIP } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

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
}

/** Counts one request (with `subject` for limits keyed by something the request carries); throws past the limit. */
export type Limit = (request: FastifyRequest, subject?: string) => Promise<void>

declare module 'fastify' {
  interface FastifyInstance {
    limiter(options: LimitOptions): Limit
  }
}

/** Keys of the in-memory store; an attacker cycling addresses must not evict the counters of real clients. */
const LOCAL_STORE_ENTRIES = 100_000

const clientAddress = (request: FastifyRequest): string => normalizeIP(request.ip, 64)

export const rateLimitPlugin = fp(
  async (app: AppInstance) => {
    const { redis } = app.deps
    await app.register(rateLimit, {
      global: false,
      cache: LOCAL_STORE_ENTRIES,
      ...(redis && { redis, nameSpace: 'anchor:rate:' }),
    })
    // A subject passed with the call reaches the key generator, which sees the request only, through this map.
    const subjects = new WeakMap<FastifyRequest, string>()

    app.decorate(
      'limiter',
      ({ name, max, timeWindowMs, what, key = clientAddress, failClosedDetail }: LimitOptions) => {
        const options: CreateRateLimitOptions & { cache: number } = {
          max,
          timeWindow: timeWindowMs,
          keyGenerator: (request) => `${name}:${key(request, subjects.get(request))}`,
          skipOnError: failClosedDetail === undefined,
          // Each limit gets a store of its own, sized by this (the library's types omit it; its default is 5,000).
          cache: LOCAL_STORE_ENTRIES,
        }
        const check = app.createRateLimit(options)
        return async (request: FastifyRequest, subject?: string) => {
          if (subject !== undefined) subjects.set(request, subject)
          let result: Awaited<ReturnType<typeof check>>
          try {
            result = await check(request)
          } catch (error) {
            // Only a limit that fails closed lets a store failure through (the library skips it otherwise).
            if (failClosedDetail === undefined) throw error
            throw new ProblemError(503, 'NOT_READY', failClosedDetail, { cause: error })
          }
          if (!result.isAllowed && result.isExceeded) {
            throw new ProblemError(429, 'RATE_LIMITED', `Too many ${what}; try again later`, {
              headers: { 'retry-after': String(Math.max(1, result.ttlInSeconds)) },
            })
          }
        }
      },
    )
  },
  { name: 'rate-limit' },
)
