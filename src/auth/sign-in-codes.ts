// Six-digit e-mail sign-in codes: issued, stored as a keyed hash, consumed at most once, dead after too many misses.
import { createHmac, hkdfSync, randomInt, randomUUID, timingSafeEqual } from 'node:crypto'
import { and, desc, eq, gt, lt, sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { magicLinks } from '../db/schema.ts'

export interface SignInCodeSettings {
  /** Key of the code hash, derived from the JWT secret: without it a leaked table does not give codes away. */
  key: Uint8Array
  ttlSeconds: number
  maxAttempts: number
}

const CODE_DIGITS = 6

/** A separate key for code hashes, so the JWT signing key is never used for anything but JWTs. */
export function deriveSignInCodeKey(jwtSecret: string): Uint8Array {
  return new Uint8Array(hkdfSync('sha256', jwtSecret, '', 'document-anchoring-service/sign-in-code/v1', 32))
}

/** Uniform over 000000–999999: randomInt rejects biased draws. */
export function generateSignInCode(): string {
  return randomInt(0, 10 ** CODE_DIGITS)
    .toString()
    .padStart(CODE_DIGITS, '0')
}

/**
 * Stores a new code for `email` and retires every older one, so only the newest code can sign in. The row id is
 * part of the hash: equal codes never share a hash, and a hash is useless for any other row or address.
 */
export async function issueSignInCode(
  db: Database,
  settings: SignInCodeSettings,
  email: string,
  now = new Date(),
): Promise<string> {
  const code = generateSignInCode()
  const id = randomUUID()
  await db.transaction(async (tx) => {
    await tx
      .update(magicLinks)
      .set({ used: true })
      .where(and(eq(magicLinks.email, email), eq(magicLinks.used, false)))
    await tx.insert(magicLinks).values({
      id,
      email,
      code: hashCode(settings.key, id, email, code),
      expiresAt: new Date(now.getTime() + settings.ttlSeconds * 1000),
      createdAt: now,
    })
  })
  return code
}

/**
 * True exactly once for the right code of the newest live row. Each step is one conditional UPDATE, so N parallel
 * attempts with the right code yield one winner, and a right code that arrives after `maxAttempts` misses loses.
 */
export async function consumeSignInCode(
  db: Database,
  settings: SignInCodeSettings,
  email: string,
  code: string,
  now = new Date(),
): Promise<boolean> {
  const [row] = await db
    .select({ id: magicLinks.id, code: magicLinks.code })
    .from(magicLinks)
    .where(eq(magicLinks.email, email))
    .orderBy(desc(magicLinks.createdAt))
    .limit(1)
  if (!row) {
    // The same hashing work as for a known address, so the answer takes as long.
    hashCode(settings.key, randomUUID(), email, code)
    return false
  }
  const live = and(
    eq(magicLinks.id, row.id),
    eq(magicLinks.used, false),
    gt(magicLinks.expiresAt, now),
    lt(magicLinks.failedAttempts, settings.maxAttempts),
  )
  if (sameHash(hashCode(settings.key, row.id, email, code), row.code)) {
    const won = await db.update(magicLinks).set({ used: true }).where(live).returning({ id: magicLinks.id })
    return won.length === 1
  }
  await db
    .update(magicLinks)
    .set({
      failedAttempts: sql`${magicLinks.failedAttempts} + 1`,
      used: sql`${magicLinks.failedAttempts} + 1 >= ${settings.maxAttempts}`,
    })
    .where(live)
  return false
}

/** Rows past their expiry by `graceSeconds` serve nothing; the periodic cleanup drops them. */
export async function deleteExpiredSignInCodes(db: Database, graceSeconds: number, now = new Date()): Promise<void> {
  await db.delete(magicLinks).where(lt(magicLinks.expiresAt, new Date(now.getTime() - graceSeconds * 1000)))
}

function hashCode(key: Uint8Array, id: string, email: string, code: string): string {
  return createHmac('sha256', key).update(`${id}\n${email}\n${code}`).digest('hex')
}

function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex')
  const right = Buffer.from(b, 'hex')
  return left.length === right.length && timingSafeEqual(left, right)
}
