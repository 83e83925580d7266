// The guard of protected routes: a valid HS256 bearer token whose session is live, else 401 UNAUTHENTICATED.

import type { FastifyReply, FastifyRequest } from 'fastify'
import { InvalidTokenError, type JwtSettings, type TrustProvider, verifyToken } from '../auth/jwt.ts'
import type { SessionChecker } from '../auth/sessions.ts'
import { ProblemError } from './problem.ts'

export interface AuthenticatedUser {
  id: string
  email: string
  sessionId: string
  trust: TrustProvider
  verified: boolean
  /** When the token was issued: how recently the user signed in. */
  issuedAt: Date
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the authenticate guard; present on every protected route. */
    user: AuthenticatedUser
  }
}

// The scheme is case-insensitive (RFC 9110, section 11.1).
const BEARER = /^Bearer ([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i

export function createAuthenticate(jwt: JwtSettings, sessionChecker: SessionChecker) {
  return async function authenticate(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    // Whatever a protected route answers is the user's own: no shared cache may keep it, no private one store it.
    reply.header('cache-control', 'private, no-store')
    const match = BEARER.exec(request.headers.authorization ?? '')
    if (!match) throw unauthenticated('Send a bearer token in the Authorization header')
    let claims: Awaited<ReturnType<typeof verifyToken>>
    try {
      claims = await verifyToken(jwt, match[1]!)
    } catch (error) {
      if (error instanceof InvalidTokenError) throw unauthenticated('The token is invalid or expired')
      throw error
    }
    const state = await sessionChecker.state(claims.sid, claims.sub)
    if (state === 'ended') throw unauthenticated('The session has ended; sign in again')
    if (state === 'blocked') throw accountBlocked()
    request.user = {
      id: claims.sub,
      email: claims.email,
      sessionId: claims.sid,
      trust: claims.trust,
      verified: claims.verified,
      issuedAt: claims.issuedAt,
    }
  }
}

function unauthenticated(detail: string): ProblemError {
  return new ProblemError(401, 'UNAUTHENTICATED', detail, { headers: { 'www-authenticate': 'Bearer' } })
}

/** A blocked account, refused at sign-in and on every route that needs a session. */
export function accountBlocked(): ProblemError {
  return new ProblemError(403, 'ACCOUNT_BLOCKED', 'This account is blocked; contact the service’s operator')
}
