// Deleting an account at its owner's request: the user, their sessions, sign-in and exchange codes, library and usage
// go; their anchors' on-chain events cannot go (and hold no personal data: a hash, a previous hash, the relayer's
// address), so the anchor rows stay for verification from the chain, with the ciphertext and the identity attestation
// erased. This month's usage is kept under the SHA-256 of the address, so deleting and making the account again does
// not reset its quota (deleteExpiredDeletedUsage, run by the periodic sign-in cleanup, drops past months). One
// transaction: all of it happens, or none.
import { sql } from 'drizzle-orm'
import type { Hash } from 'viem'
import { emailHash } from '../auth/users.ts'
import type { Database } from '../db/database.ts'
import { quotaPeriod } from '../db/schema.ts'
import { type Executor, rows } from '../db/sql-rows.ts'
import { revokeSignerCertificates } from '../pdf-signing/signer-certificate-store.ts'

export interface DeletedAccount {
  /** Its sessions, for the instances' caches of live ones to forget at once. */
  sessionIds: string[]
  /** Transactions whose stored ciphertext was erased: cached verifications of them must go too. */
  erasedTxHashes: Hash[]
}

/** Deletes the account; undefined when it was gone already. `alongside` runs first in the same transaction (an audit). */
export async function deleteAccount(
  db: Database,
  userId: string,
  now = new Date(),
  alongside?: (tx: Executor) => Promise<void>,
): Promise<DeletedAccount | undefined> {
  return db.transaction(async (tx) => {
    const [user] = await rows<{ email: string }>(tx, sql`SELECT email FROM users WHERE id = ${userId} FOR UPDATE`)
    if (!user) return undefined
    await alongside?.(tx)
    const { period } = quotaPeriod(now)
    await tx.execute(
      sql`INSERT INTO deleted_account_usage (email_hash, period, used)
          SELECT ${emailHash(user.email)}, period, used FROM anchor_usage WHERE user_id = ${userId} AND period = ${period}
          ON CONFLICT (email_hash, period) DO UPDATE
            SET used = GREATEST(deleted_account_usage.used, excluded.used)`,
    )
    const erased = await rows<{ tx_hash: string }>(
      tx,
      sql`UPDATE anchors
          SET encrypted_payload = NULL, identity_commitment = NULL, attested_trust = NULL, attested_verified = NULL,
              payload_erased_at = ${now.toISOString()}::timestamptz, updated_at = now()
          WHERE user_id = ${userId} AND payload_erased_at IS NULL
          RETURNING tx_hash`,
    )
    const sessions = await rows<{ id: string }>(tx, sql`SELECT id FROM sessions WHERE user_id = ${userId}`)
    await tx.execute(sql`DELETE FROM magic_links WHERE email = ${user.email}`)
    // The operators' records of the account stay (they are the operators' log), under the address's hash only.
    await tx.execute(sql`UPDATE operator_audit SET user_email = ${emailHash(user.email)} WHERE user_id = ${userId}`)
    // Its signer certificates are revoked and forget the e-mail they named; their serials stay for the revocation list.
    await revokeSignerCertificates(tx, userId, 'deleted')
    // Sessions, exchange codes, library items and usage go with the user (ON DELETE CASCADE); the anchors and signer
    // certificates stay, their user_id set to null.
    await tx.execute(sql`DELETE FROM users WHERE id = ${userId}`)
    return {
      sessionIds: sessions.map((session) => String(session.id)),
      erasedTxHashes: erased.map((row) => row.tx_hash as Hash).filter((hash) => hash.startsWith('0x')),
    }
  })
}

/** Deleted accounts' usage of past months: what quota it held has reset, so the address's hash goes too. */
export async function deleteExpiredDeletedUsage(db: Database, now = new Date()): Promise<void> {
  await db.execute(sql`DELETE FROM deleted_account_usage WHERE period < ${quotaPeriod(now).period}`)
}
