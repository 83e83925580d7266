// Sessions: one row per sign-in, named by the token's `sid`. Revoking the row kills the token at once.
import { createHash, randomUUID } from 'node:crypto'
import { and, eq, gt, isNull } from 'drizzle-orm'
import { LRUCache } from 'lru-cache'
import type { Database } from '../db/database.ts'
import { sessions } from '../db/schema.ts'
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
): Promise<IssuedToken & { sessionId: string }> {
  const sessionId = randomUUID()
  const issued = await issueToken(jwt, { sub: user.id, email: user.email, sid: sessionId, trust, verified: true })
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
 * protected routes cost no query per request; revocation through this checker evicts at once.
 */
export class SessionChecker {
  private readonly live: LRUCache<string, true>

  constructor(
    private readonly db: Database,
    cacheTtlMs = 5_000,
  ) {
    this.live = new LRUCache({ max: 50_000, ttl: cacheTtlMs })
  }

  async isActive(sessionId: string, userId: string, now = new Date()): Promise<boolean> {
    const key = `${userId}:${sessionId}`
    if (this.live.get(key)) return true
    const [row] = await this.db
      .select({ id: sessions.id })
      .from(sessions)
      .where(
        and(
          eq(sessions.id, sessionId),
          eq(sessions.userId, userId),
          isNull(sessions.revokedAt),
          gt(sessions.expiresAt, now),
        ),
      )
      .limit(1)
    if (!row) return false
    this.live.set(key, true)
    return true
  }

  async revoke(sessionId: string, userId: string): Promise<void> {
    this.live.delete(`${userId}:${sessionId}`)
    await this.db
      .update(sessions)
      .set({ revokedAt: new Date() })
      .where(and(eq(sessions.id, sessionId), eq(sessions.userId, userId)))
  }
}
