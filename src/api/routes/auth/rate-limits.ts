// Sign-in rate limits: each check counts one attempt and answers 429 RATE_LIMITED with Retry-After once over its
// limit. They fail closed: without its counters, sign-in would be open to guessing and mail flooding.
import { createHash } from 'node:crypto'
import type { AppInstance } from '../../app-types.ts'
import type { Limit } from '../../plugins/rate-limit.ts'

export interface SignInLimiters {
  codeRequestsPerIp: Limit
  /** Keyed by the (hashed, lower-cased) address passed as `subject`. */
  codeSendsPerEmail: Limit
  verificationsPerIp: Limit
  oauthStartsPerIp: Limit
}

const HOUR_MS = 60 * 60 * 1000
const UNAVAILABLE = 'Sign-in is temporarily unavailable; try again shortly'

export function createSignInLimiters(app: AppInstance): SignInLimiters {
  const { limits, signIn } = app.deps.config
  const perHour = (name: string, max: number, what: string, key?: (subject: string | undefined) => string) =>
    app.limiter({
      name: `auth:${name}`,
      max,
      timeWindowMs: HOUR_MS,
      what,
      failClosedDetail: UNAVAILABLE,
      ...(key && { key: (_request, subject) => key(subject) }),
    })
  const emailKey = (subject: string | undefined) =>
    createHash('sha256')
      .update(subject ?? '')
      .digest('hex')
  return {
    codeRequestsPerIp: perHour('code-ip', limits.codeRequestsPerIpPerHour, 'sign-in code requests'),
    codeSendsPerEmail: perHour(
      'code-email',
      limits.codeSendsPerEmailPerHour,
      'sign-in codes for this address',
      emailKey,
    ),
    verificationsPerIp: perHour('verify-ip', limits.codeVerificationsPerIpPerHour, 'sign-in attempts'),
    oauthStartsPerIp: perHour('oauth-ip', signIn.oauthStartsPerIpPerHour, 'sign-in attempts'),
  }
}
