// What an operator does to an account (`npm run admin`), each in one transaction with its audit record: what, on
// whom, the state before and after, by which operator. The service reads what these write on its next request (a
// plan or limit at the next relay; a block at the next request of a session whose cache entry was evicted, which
// `ended` lists for the caller to announce to every instance).
import { sql } from 'drizzle-orm'
import { monthlyLimitOf, normalizeEmail, type PlanLimits } from '../auth/users.ts'
import type { Database } from '../db/database.ts'
import { quotaPeriod } from '../db/schema.ts'
import { type Executor, rows } from '../db/sql-rows.ts'
import { revokeSignerCertificates } from '../pdf-signing/signer-certificate-store.ts'
import { deleteAccount } from './delete-account.ts'

export type AccountChange =
  | { action: 'plan'; plan: string }
  | { action: 'limit'; monthlyLimit: number | null }
  | { action: 'block' }
  | { action: 'unblock' }
  | { action: 'revoke-sessions' }
  | { action: 'delete' }

/** The part of an account an operator changes, as the audit record keeps it before and after. */
interface AccountState {
  plan: string
  monthlyLimit: number | null
  blockedAt: string | null
  liveSessions: number
}

export interface AccountView extends AccountState {
  id: string
  email: string
  authProvider: string
  createdAt: string
  usage: { period: string; used: number; limit: number }
  anchors: { pending: number; confirmed: number; failed: number }
  library: { signatures: number; snippets: number }
}

export interface ChangeOutcome {
  userId: string
  email: string
  before: AccountState
  after: AccountState | null
  /** Sessions the change ended or made unusable: to be evicted from every instance's cache. */
  ended: string[]
  /** Transactions whose stored ciphertext the change erased (a deletion): cached verifications must go. */
  erased: string[]
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The account named by its id or its e-mail address (either case). */
export async function findAccount(db: Executor, who: string): Promise<{ id: string; email: string } | undefined> {
  const [row] = UUID.test(who)
    ? await rows<{ id: string; email: string }>(db, sql`SELECT id, email FROM users WHERE id = ${who.toLowerCase()}`)
    : await rows<{ id: string; email: string }>(
        db,
        sql`SELECT id, email FROM users WHERE email = ${normalizeEmail(who)}`,
      )
  return row ? { id: String(row.id), email: String(row.email) } : undefined
}

export async function showAccount(
  db: Database,
  userId: string,
  limits: PlanLimits,
  now = new Date(),
): Promise<AccountView | undefined> {
  const { period } = quotaPeriod(now)
  const [row] = await rows(
    db,
    sql`SELECT u.id, u.email, u.auth_provider, u.plan, u.monthly_limit, u.blocked_at, u.created_at,
          (SELECT count(*) FROM sessions s
            WHERE s.user_id = u.id AND s.revoked_at IS NULL AND s.expires_at > now()) AS live_sessions,
          (SELECT used FROM anchor_usage au WHERE au.user_id = u.id AND au.period = ${period}) AS used,
          (SELECT count(*) FROM anchors a WHERE a.user_id = u.id AND a.status = 'pending') AS pending,
          (SELECT count(*) FROM anchors a WHERE a.user_id = u.id AND a.status = 'confirmed') AS confirmed,
          (SELECT count(*) FROM anchors a WHERE a.user_id = u.id AND a.status = 'failed') AS failed,
          (SELECT count(*) FROM cloud_signatures c WHERE c.user_id = u.id AND c.deleted_at IS NULL) AS signatures,
          (SELECT count(*) FROM cloud_text_snippets c WHERE c.user_id = u.id AND c.deleted_at IS NULL) AS snippets
        FROM users u WHERE u.id = ${userId}`,
  )
  if (!row) return undefined
  const state = stateOf(row)
  return {
    id: String(row.id),
    email: String(row.email),
    authProvider: String(row.auth_provider),
    createdAt: new Date(row.created_at as string).toISOString(),
    ...state,
    usage: { period, used: Number(row.used ?? 0), limit: monthlyLimitOf(limits, state) },
    anchors: { pending: Number(row.pending), confirmed: Number(row.confirmed), failed: Number(row.failed) },
    library: { signatures: Number(row.signatures), snippets: Number(row.snippets) },
  }
}

/** Applies `change` to the account and records it; undefined when there is no such account. */
export async function changeAccount(
  db: Database,
  operator: string,
  userId: string,
  change: AccountChange,
): Promise<ChangeOutcome | undefined> {
  if (change.action === 'delete') return deleteAudited(db, operator, userId)
  return db.transaction(async (tx) => {
    const before = await lockedState(tx, userId)
    if (!before) return undefined
    let ended: string[] = []
    switch (change.action) {
      case 'plan':
        await tx.execute(sql`UPDATE users SET plan = ${change.plan}, updated_at = now() WHERE id = ${userId}`)
        break
      case 'limit':
        await tx.execute(
          sql`UPDATE users SET monthly_limit = ${change.monthlyLimit}, updated_at = now() WHERE id = ${userId}`,
        )
        break
      case 'block':
        await tx.execute(
          sql`UPDATE users SET blocked_at = COALESCE(blocked_at, now()), updated_at = now() WHERE id = ${userId}`,
        )
        // A blocked account's certificates are revoked for good: an unblocked one asks for new ones.
        await revokeSignerCertificates(tx, userId, 'blocked')
        ended = (await liveSessionIds(tx, userId)).map(String)
        break
      case 'unblock':
        await tx.execute(sql`UPDATE users SET blocked_at = NULL, updated_at = now() WHERE id = ${userId}`)
        break
      case 'revoke-sessions':
        ended = (
          await rows<{ id: string }>(
            tx,
            sql`UPDATE sessions SET revoked_at = now() WHERE user_id = ${userId} AND revoked_at IS NULL RETURNING id`,
          )
        ).map((row) => String(row.id))
        break
    }
    const after = (await lockedState(tx, userId))!.state
    await audit(tx, { operator, action: change.action, userId, email: before.email, before: before.state, after })
    return { userId, email: before.email, before: before.state, after, ended, erased: [] }
  })
}

async function deleteAudited(db: Database, operator: string, userId: string): Promise<ChangeOutcome | undefined> {
  let before: { email: string; state: AccountState } | undefined
  const deleted = await deleteAccount(db, userId, new Date(), async (tx) => {
    before = await lockedState(tx, userId)
    if (before) await audit(tx, { operator, action: 'delete', userId, email: before.email, before: before.state })
  })
  if (!deleted || !before) return undefined
  return {
    userId,
    email: before.email,
    before: before.state,
    after: null,
    ended: deleted.sessionIds,
    erased: deleted.erasedTxHashes,
  }
}

async function lockedState(tx: Executor, userId: string): Promise<{ email: string; state: AccountState } | undefined> {
  const [row] = await rows(
    tx,
    sql`SELECT u.email, u.plan, u.monthly_limit, u.blocked_at,
          (SELECT count(*) FROM sessions s
            WHERE s.user_id = u.id AND s.revoked_at IS NULL AND s.expires_at > now()) AS live_sessions
        FROM users u WHERE u.id = ${userId} FOR UPDATE OF u`,
  )
  return row ? { email: String(row.email), state: stateOf(row) } : undefined
}

function stateOf(row: Record<string, unknown>): AccountState {
  return {
    plan: String(row.plan),
    monthlyLimit: row.monthly_limit === null ? null : Number(row.monthly_limit),
    blockedAt: row.blocked_at === null ? null : new Date(row.blocked_at as string).toISOString(),
    liveSessions: Number(row.live_sessions),
  }
}

async function liveSessionIds(tx: Executor, userId: string): Promise<string[]> {
  const found = await rows<{ id: string }>(
    tx,
    sql`SELECT id FROM sessions WHERE user_id = ${userId} AND revoked_at IS NULL AND expires_at > now()`,
  )
  return found.map((row) => String(row.id))
}

async function audit(
  tx: Executor,
  record: { operator: string; action: string; userId: string; email: string; before: AccountState; after?: unknown },
): Promise<void> {
  await tx.execute(
    sql`INSERT INTO operator_audit (operator, action, user_id, user_email, before, after)
        VALUES (${record.operator}, ${record.action}, ${record.userId}, ${record.email},
                ${JSON.stringify(record.before)}::jsonb, ${record.after === undefined ? null : JSON.stringify(record.after)}::jsonb)`,
  )
}
