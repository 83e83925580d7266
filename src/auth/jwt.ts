// HS256 session tokens: issued at sign-in, verified on every protected request. Nothing but HS256 is accepted.
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose'

export const TRUST_PROVIDERS = ['email', 'google', 'microsoft'] as const
export type TrustProvider = (typeof TRUST_PROVIDERS)[number]

export const TOKEN_LIFETIME_SECONDS = 24 * 60 * 60
/** Tolerated clock difference between this service and whoever set the clock of `exp`/`iat`. */
const CLOCK_TOLERANCE_SECONDS = 60

export interface TokenClaims {
  /** The user's id. */
  sub: string
  email: string
  /** The session's id; revoking the session kills the token. */
  sid: string
  trust: TrustProvider
  verified: boolean
  /** When the token was issued (`iat`): how recently its holder signed in. */
  issuedAt: Date
}

export interface JwtSettings {
  secret: string
  issuer: string
  audience: string
}

/** Users and sessions are keyed by UUID: a token naming anything else cannot belong to this service. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

export class InvalidTokenError extends Error {
  override name = 'InvalidTokenError'
}

export interface IssuedToken {
  token: string
  expiresAt: Date
}

export async function issueToken(
  settings: JwtSettings,
  claims: Omit<TokenClaims, 'issuedAt'>,
  now = new Date(),
): Promise<IssuedToken> {
  const issuedAt = Math.floor(now.getTime() / 1000)
  const expiresAt = issuedAt + TOKEN_LIFETIME_SECONDS
  const token = await new SignJWT({
    email: claims.email,
    sid: claims.sid,
    trust: claims.trust,
    verified: claims.verified,
  })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub)
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(secretKey(settings.secret))
  return { token, expiresAt: new Date(expiresAt * 1000) }
}

/**
 * Verifies signature, algorithm, issuer, audience and lifetime; throws InvalidTokenError on any failure. Defence in
 * depth against a token signed with the real secret by something else than `issueToken`: it must not be issued in the
 * future (beyond the clock tolerance) nor live longer than the tokens this service issues.
 */
export async function verifyToken(settings: JwtSettings, token: string, now = new Date()): Promise<TokenClaims> {
  try {
    const { payload } = await jwtVerify(token, secretKey(settings.secret), {
      algorithms: ['HS256'],
      issuer: settings.issuer,
      audience: settings.audience,
      clockTolerance: CLOCK_TOLERANCE_SECONDS,
      currentDate: now,
      requiredClaims: ['sub', 'sid', 'exp', 'iat'],
      // Also refuses an `iat` in the future (jose checks it against the clock once a maximum age is given).
      maxTokenAge: TOKEN_LIFETIME_SECONDS,
    })
    const { sub, email, sid, trust, verified } = payload
    if (payload.exp! - payload.iat! > TOKEN_LIFETIME_SECONDS) {
      throw new InvalidTokenError('token lives longer than the tokens this service issues')
    }
    if (
      typeof sub !== 'string' ||
      !UUID.test(sub) ||
      typeof email !== 'string' ||
      typeof sid !== 'string' ||
      !UUID.test(sid) ||
      !TRUST_PROVIDERS.includes(trust as TrustProvider) ||
      typeof verified !== 'boolean'
    ) {
      throw new InvalidTokenError('token claims are malformed')
    }
    return { sub, email, sid, trust: trust as TrustProvider, verified, issuedAt: new Date(payload.iat! * 1000) }
  } catch (error) {
    if (error instanceof InvalidTokenError) throw error
    if (error instanceof joseErrors.JOSEError) throw new InvalidTokenError(error.code)
    throw error
  }
}

const keys = new Map<string, Uint8Array>()
function secretKey(secret: string): Uint8Array {
  let key = keys.get(secret)
  if (!key) {
    key = new TextEncoder().encode(secret)
    keys.set(secret, key)
  }
  return key
}
