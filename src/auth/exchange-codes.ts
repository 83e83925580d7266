// The opt-in desktop hand-off: a one-time code in the deep link instead of the JWT, redeemable only by the app that
// holds the PKCE verifier of the challenge it started the sign-in with (RFC 8252 § 8.1, RFC 7636).
import { createHash, randomBytes } from 'node:crypto'
import { and, eq, gt, lt } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { authExchangeCodes } from '../db/schema.ts'
import type { TrustProvider } from './jwt.ts'
import { hashToken } from './sessions.ts'

/** RFC 7636 S256: base64url(SHA-256(verifier)). */
export function s256(verifier: string): string {
  return createHash('sha256').update(verifier).digest('base64url')
}

/** 256 random bits, base64url: 43 characters. Only its hash is stored. */
export async function createExchangeCode(
  db: Database,
  grant: { userId: string; trust: TrustProvider; codeChallenge: string },
  ttlSeconds: number,
  now = new Date(),
): Promise<string> {
  const code = randomBytes(32).toString('base64url')
  await db.insert(authExchangeCodes).values({
    codeHash: hashToken(code),
    userId: grant.userId,
    trust: grant.trust,
    codeChallenge: grant.codeChallenge,
    expiresAt: new Date(now.getTime() + ttlSeconds * 1000),
    createdAt: now,
  })
  return code
}

/**
 * Deletes and returns the grant of a live code whose challenge the verifier answers, in one statement: a replay,
 * a parallel second use or a wrong verifier finds no row. A wrong verifier leaves the code in place, so whoever
 * merely saw the deep link cannot burn the app's sign-in.
 */
export async function redeemExchangeCode(
  db: Database,
  code: string,
  codeVerifier: string,
  now = new Date(),
): Promise<{ userId: string; trust: string } | undefined> {
  const [row] = await db
    .delete(authExchangeCodes)
    .where(
      and(
        eq(authExchangeCodes.codeHash, hashToken(code)),
        eq(authExchangeCodes.codeChallenge, s256(codeVerifier)),
        gt(authExchangeCodes.expiresAt, now),
      ),
    )
    .returning({ userId: authExchangeCodes.userId, trust: authExchangeCodes.trust })
  return row
}

export async function deleteExpiredExchangeCodes(db: Database, now = new Date()): Promise<void> {
  await db.delete(authExchangeCodes).where(lt(authExchangeCodes.expiresAt, now))
}
