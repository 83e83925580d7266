// Sessions: one row per sign-in, named by the token's `sid`. Revoking the row kills the token at once.
import { createHash, randomUUID } from 'node:crypto'
import { and, eq, gt, isNull } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/database.ts'
import { sessions, users } from '../db/schema.ts'
import { CHANNELS, RedisAnnouncements } from '../redis-announcements.ts'
import { type IssuedToken, issueToken, type JwtSettings, type TrustProvider } from './jwt.ts'

export interface SessionUser {
  id: string
  email: string
}

/** Creates a session and its token; the row stores only the token's hash. */
export async function startSession(
  db: Database,
  jwt: JwtSettings,
  user: SessionUser,
  trust: TrustProvider,
  now = new Date(),
): Promise<IssuedToken & { sessionId: string }> {
  const sessionId = randomUUID()
  const issued = await issueToken(jwt, { sub: user.id, email: user.email, sid: sessionId, trust, verified: true }, now)
  await db.insert(sessions).values({
    id: sessionId,
    userId: user.id,
    token: hashToken(issued.token),
    trust,
    expiresAt: issued.expiresAt,
  })
  return { ...issued, sessionId }
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex')
}

/**
 * Answers "is this session live?" for every authenticated request. A live answer is cached for a few seconds so
 * protected routes cost no query per request; revocation through this checker evicts at once, on every instance when
 * they share a Redis (`shareRevocations`), else on this one at once and on others when their entry expires. With a
 * shared Redis, the cache is trusted only while the revocations can reach it: while Redis is away every request asks
 * the database, and the cache starts empty once it is back (a revocation announced meanwhile was not heard).
 */
export class SessionChecker {
  private readonly live: LRUCache<string, true>
  private revocations: RedisAnnouncements | undefined

  constructor(
    private readonly db: Database,
    cacheTtlMs = 5_000,
  ) {
    this.live = new LRUCache({ max: 50_000, ttl: cacheTtlMs })
  }

  /** With a Redis shared by several instances: a revocation on any of them evicts the session on all at once. */
  async shareRevocations(redis: Redis, log: FastifyBaseLogger): Promise<void> {
    this.revocations = new RedisAnnouncements(
      redis,
      CHANNELS.sessionEnded,
      (key) => this.live.delete(key),
      log,
      () => this.live.clear(),
    )
    await this.revocations.start()
  }

  /** Whether revocations announced by other instances reach this one now (always, with no shared Redis to hear). */
  get hearsRevocations(): boolean {
    return this.revocations === undefined || this.revocations.listening
  }

  /** `active`, `ended` (revoked, expired, deleted) or `blocked` (the account is, by an operator). */
  async state(sessionId: string, userId: string, now = new Date()): Promise<'active' | 'ended' | 'blocked'> {
    const key = cacheKey(sessionId, userId)
    if (this.hearsRevocations && this.live.get(key)) return 'active'
    const [row] = await this.db
      .select({ blockedAt: users.blockedAt })
      .from(sessions)
      .innerJoin(users, eq(users.id, sessions.userId))
      .where(
        and(
          eq(sessions.id, sessionId),
          eq(sessions.userId, userId),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
        ),
      )
      .limit(1)
    if (!row) return 'ended'
    if (row.blockedAt) return 'blocked'
    this.live.set(key, true)
    return 'active'
  }

  async revoke(sessionId: string, userId: string): Promise<void> {
    const key = cacheKey(sessionId, userId)
    this.live.delete(key)
    await this.db
      .update(sessions)
      .set({ revokedAt: new Date() })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
    await this.revocations?.announce(key)
  }

  /** Sessions deleted with their account: dropped from this cache at once, and from every instance's through Redis. */
  async forget(sessionIds: readonly string[], userId: string): Promise<void> {
    for (const sessionId of sessionIds) {
      const key = cacheKey(sessionId, userId)
      this.live.delete(key)
      await this.revocations?.announce(key)
    }
  }

  /**
   * Every cached answer dropped: the database failed over, and sessions (and accounts) begun in the moments it lost
   * are gone, though this cache would call them live for a few seconds more.
   */
  forgetAll(): void {
    this.live.clear()
  }

  close(): void {
    this.revocations?.close()
  }
}

/** How a session is named in the cache of live ones, and in the announcements of ended ones. */
export function cacheKey(sessionId: string, userId: string): string {
  return `${userId}:${sessionId}`
}
