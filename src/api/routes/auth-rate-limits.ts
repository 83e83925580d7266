// Sign-in rate limits on @fastify/rate-limit's store: in memory by default, in Redis when REDIS_URL is set (shared by
// every instance). Each check counts one attempt and answers 429 RATE_LIMITED with Retry-After once over its limit.
import { createHash } from 'node:crypto'
import rateLimit, { normalizeIP } from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

export type Limiter = (request: FastifyRequest, subject?: string) => Promise<void>

export interface SignInLimiters {
  codeRequestsPerIp: Limiter
  /** Keyed by the (hashed, lower-cased) address passed as `subject`. */
  codeSendsPerEmail: Limiter
  verificationsPerIp: Limiter
  oauthStartsPerIp: Limiter
}

const HOUR_MS = 60 * 60 * 1000
/** Keys of the in-memory store; an attacker cycling addresses must not evict the limits of real ones. */
const LOCAL_STORE_ENTRIES = 100_000

export async function registerSignInLimiters(app: AppInstance): Promise<SignInLimiters> {
  const { config } = app.deps
  const { redis } = app.deps
  await app.register(rateLimit, {
    global: false,
    cache: LOCAL_STORE_ENTRIES,
    ...(redis && { redis, nameSpace: 'anchor:auth:rate:' }),
  })

  // The e-mail limit is keyed by the validated body's address, handed to the key generator through this map.
  const subjects = new WeakMap<FastifyRequest, string>()
  const limiter = (name: string, max: number, what: string, keyOf: (request: FastifyRequest) => string): Limiter => {
    const check = app.createRateLimit({
      max,
      timeWindow: HOUR_MS,
      keyGenerator: (request) => `${name}:${keyOf(request)}`,
    })
    return async (request, subject) => {
      if (subject !== undefined) subjects.set(request, subject)
      let result: Awaited<ReturnType<typeof check>>
      try {
        result = await check(request)
      } catch (error) {
        // Fail closed: without its counters, sign-in would be open to guessing and mail flooding.
        throw new ProblemError(503, 'NOT_READY', 'Sign-in is temporarily unavailable; try again shortly', {
          cause: error,
        })
      }
      if (!result.isAllowed && result.isExceeded) {
        throw new ProblemError(429, 'RATE_LIMITED', `Too many ${what}; try again later`, {
          headers: { 'retry-after': String(Math.max(1, result.ttlInSeconds)) },
        })
      }
    }
  }
  const emailKey = (request: FastifyRequest) =>
    createHash('sha256')
      .update(subjects.get(request) ?? '')
      .digest('hex')
  const ip = (request: FastifyRequest) => normalizeIP(request.ip, 64)
  const limits = config.limits
  return {
    codeRequestsPerIp: limiter('code-ip', limits.codeRequestsPerIpPerHour, 'sign-in code requests', ip),
    codeSendsPerEmail: limiter(
      'code-email',
      limits.codeSendsPerEmailPerHour,
      'sign-in codes for this address',
      emailKey,
    ),
    verificationsPerIp: limiter('verify-ip', limits.codeVerificationsPerIpPerHour, 'sign-in attempts', ip),
    oauthStartsPerIp: limiter('oauth-ip', config.signIn.oauthStartsPerIpPerHour, 'sign-in attempts', ip),
  }
}
