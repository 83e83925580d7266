// Accounts as sign-in sees them: one per lower-cased e-mail address, created on the first successful sign-in.

import { createHash } from 'node:crypto'
import { and, eq, sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { anchorUsage, quotaPeriod, users } from '../db/schema.ts'
import type { TrustProvider } from './jwt.ts'

export interface PublicUser {
  id: string
  email: string
  name: string | null
  authProvider: string
  plan: string
  /** An operator's monthly limit for this user alone; null: the plan's. */
  monthlyLimit: number | null
  /** When an operator blocked the account; null when it is not blocked. */
  blockedAt: Date | null
}

export interface SignInIdentity {
  /** Already verified by the provider (or by the e-mail code). */
  email: string
  provider: TrustProvider
  /** The provider's stable subject; absent for e-mail codes. */
  providerId?: string
  name?: string
}

const publicColumns = {
  id: users.id,
  email: users.email,
  name: users.name,
  authProvider: users.authProvider,
  plan: users.plan,
  monthlyLimit: users.monthlyLimit,
  blockedAt: users.blockedAt,
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase()
}

/**
 * Finds the account of a verified address or creates it, in one statement (two parallel first sign-ins make one
 * account). An OAuth sign-in records its provider and subject; an e-mail code leaves an account's provider alone.
 */
export async function signInUser(db: Database, identity: SignInIdentity, defaultPlan: string): Promise<PublicUser> {
  const email = normalizeEmail(identity.email)
  const oauth = identity.provider !== 'email'
  const [row] = await db
    .insert(users)
    .values({
      email,
      name: identity.name ?? null,
      authProvider: identity.provider,
      providerId: identity.providerId ?? null,
      plan: defaultPlan,
    })
    .onConflictDoUpdate({
      target: users.email,
      set: oauth
        ? {
            authProvider: sql`excluded.auth_provider`,
            providerId: sql`excluded.provider_id`,
            name: sql`coalesce(${users.name}, excluded.name)`,
          }
        : // A no-op update so that RETURNING yields the existing row.
          { email: sql`excluded.email` },
    })
    // xmax is 0 only for a row this statement inserted: a new account, the one time there is usage to carry over.
    .returning({ ...publicColumns, created: sql<boolean>`(xmax = 0)` })
  const { created, ...user } = row!
  if (created) await carryOverUsage(db, user.id, email)
  return user
}

/** The key deleted accounts' usage is kept under (src/accounts/delete-account.ts): the address, normalized, hashed. */
export function emailHash(email: string): string {
  return createHash('sha256').update(normalizeEmail(email)).digest('hex')
}

/**
 * What a new account of `email` starts this month from: the usage a deleted account of the address left, if any, so
 * that deleting and re-creating an account does not reset its quota.
 */
async function carryOverUsage(db: Database, userId: string, email: string, now = new Date()): Promise<void> {
  const { period } = quotaPeriod(now)
  await db.execute(
    sql`INSERT INTO anchor_usage (user_id, period, used)
        SELECT ${userId}, period, used FROM deleted_account_usage
        WHERE email_hash = ${emailHash(email)} AND period = ${period}
        ON CONFLICT (user_id, period) DO NOTHING`,
  )
}

export async function findUser(db: Database, id: string): Promise<PublicUser | undefined> {
  const [row] = await db.select(publicColumns).from(users).where(eq(users.id, id)).limit(1)
  return row
}

export interface Usage {
  used: number
  limit: number
  /** Start of the next calendar month (UTC), when `used` starts again from zero. */
  resetsAt: string
}

/** Anchors used in the current UTC month against the plan's monthly limit (the relay counts them in `anchor_usage`). */
export async function monthlyUsage(db: Database, userId: string, limit: number, now = new Date()): Promise<Usage> {
  const { period, resetsAt } = quotaPeriod(now)
  const [row] = await db
    .select({ used: anchorUsage.used })
    .from(anchorUsage)
    .where(and(eq(anchorUsage.userId, userId), eq(anchorUsage.period, period)))
    .limit(1)
  return { used: row?.used ?? 0, limit, resetsAt: resetsAt.toISOString() }
}

/** The plans' monthly limits (PLANS) and the plan of a user whose plan is not among them (DEFAULT_PLAN). */
export interface PlanLimits {
  plans: Record<string, number>
  defaultPlan: string
}

/** A user's monthly anchor limit: their own, set by an operator, else their plan's (what reserve_anchors applies). */
export function monthlyLimitOf(limits: PlanLimits, user: { plan: string; monthlyLimit: number | null }): number {
  return user.monthlyLimit ?? limits.plans[user.plan] ?? limits.plans[limits.defaultPlan] ?? 0
}
