// A relay's writes, each one transaction or one statement so a failure leaves nothing half-written: reserving the
// anchor with its quota count and nonce, storing its signed transaction before the broadcast, withdrawing it when the
// node certainly refused it, and moving it to a fresh nonce when another transaction took its own.
import type { IdentityAttestation } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Database } from '../../db/database.ts'
import { withDeadlockRetry } from '../../db/deadlock-retry.ts'
import { rows } from '../../db/sql-rows.ts'
import type { SignedTransaction } from '../signing.ts'
import { takeNonce } from './nonces.ts'
import { insertRelayTransaction } from './relay-transactions.ts'
import type { Slot } from './slot.ts'
import { ANCHOR_TRANSITIONS as ANCHOR, leaves, RELAY_TRANSACTION_TRANSITIONS as TRANSACTION } from './transitions.ts'

export interface NewAnchor {
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
  userId: string
  /** The quota period it counts against (`quotaPeriod().period` when the request arrived). */
  period: string
  /** Stored with the anchor by `reserve_anchors`; absent or null for a relay without salt. */
  attestation?: IdentityAttestation | null
}

export interface Quota {
  /** Monthly anchor limit per plan name. */
  plans: Record<string, number>
  /** The plan of a user whose plan is not in `plans`. */
  defaultPlan: string
}

export type ReserveResult =
  | { kind: 'reserved'; anchorId: string; nonce: number }
  /** Another anchor holds the composite hash. */
  | { kind: 'exists' }
  /** `used` is the count as this batch saw it; it may lag a concurrent increment, never lead it. */
  | { kind: 'quota_exceeded'; limit: number; used: number }
  /** The user was deleted since the request signed in. */
  | { kind: 'no_user' }

/**
 * Counts each anchor against its user's quota, takes a nonce and stores the anchor holding it: one call of
 * `reserve_anchors` (drizzle/functions/reserve_anchors.sql) for the whole batch, one transaction, so concurrent
 * relays share it and the relayer's nonce row is locked only while it runs. An item whose composite hash is taken is
 * undone on its own, count and nonce with it. Signing (about 1 ms of CPU each) happens afterwards, so no lock is held across it;
 * `attachSigned` then stores the signed transactions before anyone sends them.
 */
export async function reserveAnchors(
  db: Database,
  slot: Slot,
  anchors: NewAnchor[],
  quota: Quota,
): Promise<ReserveResult[]> {
  if (anchors.length === 0) return []
  // reserve_anchors takes its locks in one order: only a rare composite hash raced across relayers and users at once
  // can still meet a deadlock.
  const results = await withDeadlockRetry(() =>
    rows(
      db,
      sql`SELECT item, outcome, anchor_id, nonce, quota_limit, quota_used
          FROM reserve_anchors(${slot.chainId}::int, ${slot.relayer}::text, ${JSON.stringify(quota.plans)}::jsonb,
                               ${quota.plans[quota.defaultPlan] ?? 0}::int, ${JSON.stringify(anchors)}::jsonb)`,
    ),
  )
  if (results.length !== anchors.length) throw new Error('reserve_anchors answered for a different number of items')
  const byItem = new Map(results.map((row) => [Number(row.item), row]))
  return anchors.map((_, i): ReserveResult => {
    const row = byItem.get(i + 1)
    switch (row?.outcome) {
      case 'reserved':
        return { kind: 'reserved', anchorId: String(row.anchor_id), nonce: Number(row.nonce) }
      case 'quota_exceeded':
        return { kind: 'quota_exceeded', limit: Number(row.quota_limit ?? 0), used: Number(row.quota_used ?? 0) }
      case 'exists':
      case 'no_user':
        return { kind: row.outcome }
      default:
        throw new Error(`reserve_anchors answered no known outcome for item ${i + 1}`)
    }
  })
}

export interface Attachment {
  anchorId: string
  nonce: number
  signed: SignedTransaction
}

/**
 * Stores the signed transactions of reserved anchors, in one call of `attach_signed`, before they are broadcast. False
 * when someone else (the monitor, finishing a reservation a crashed request left) signed that anchor first.
 */
export async function attachSigned(db: Database, slot: Slot, attachments: Attachment[]): Promise<boolean[]> {
  if (attachments.length === 0) return []
  const items = attachments.map(({ anchorId, nonce, signed }) => ({
    anchorId,
    txHash: signed.hash,
    nonce,
    raw: signed.raw,
    maxFee: signed.fees.maxFeePerGas.toString(),
    maxPriority: signed.fees.maxPriorityFeePerGas.toString(),
  }))
  const attached = await rows(
    db,
    sql`SELECT attach_signed AS anchor_id
        FROM attach_signed(${slot.chainId}::int, ${slot.relayer}::text, ${JSON.stringify(items)}::jsonb)`,
  )
  const done = new Set(attached.map((r) => String(r.anchor_id)))
  return attachments.map((a) => done.has(a.anchorId))
}

/**
 * Undoes a relay whose transaction certainly never reached the node: the anchor, its outbox row, the quota and
 * anchor counts go, and the nonce is released. If later nonces were handed out meanwhile, releasing it would leave a
 * gap on chain, so it is kept by a filler (reused by the next relay, or sent by the monitor as a self-transfer).
 */
export async function withdrawAnchor(
  db: Database,
  slot: Slot,
  params: { anchorId: string; userId: string; period: string; nonce: number },
  signFiller: (nonce: number) => Promise<SignedTransaction>,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    const [row] = await rows(
      tx,
      sql`SELECT next_nonce FROM relayer_nonces
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} FOR UPDATE`,
    )
    const deleted = await rows(
      tx,
      sql`DELETE FROM anchors WHERE id = ${params.anchorId}
            AND NOT EXISTS (SELECT 1 FROM relay_transactions WHERE anchor_id = ${params.anchorId} AND status <> 'signed')
          RETURNING 1`,
    )
    // The monitor claimed the transaction meanwhile and sends it: it is no longer ours to undo.
    if (deleted.length === 0) return false
    await tx.execute(
      sql`UPDATE anchor_usage SET used = used - 1
          WHERE user_id = ${params.userId} AND period = ${params.period} AND used > 0`,
    )
    await tx.execute(
      sql`UPDATE users SET anchor_count = anchor_count - 1 WHERE id = ${params.userId} AND anchor_count > 0`,
    )
    let next = Number(row?.next_nonce)
    if (next !== params.nonce + 1) {
      await insertRelayTransaction(tx, slot, {
        anchorId: null,
        nonce: params.nonce,
        signed: await signFiller(params.nonce),
      })
      return true
    }
    // The tail: hand the nonce back, and any unsent fillers right below it with it.
    next = params.nonce
    for (;;) {
      const [popped] = await rows(
        tx,
        sql`DELETE FROM relay_transactions
            WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} AND nonce = ${next - 1}
              AND anchor_id IS NULL AND status = 'signed'
            RETURNING nonce`,
      )
      if (!popped) break
      next -= 1
    }
    await tx.execute(
      sql`UPDATE relayer_nonces SET next_nonce = ${next}, updated_at = now()
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}`,
    )
    return true
  })
}

/**
 * Moves an anchor whose nonce another transaction consumed onto a fresh nonce, with a newly signed transaction.
 * Undefined when the anchor is no longer pending (one of its transactions was mined meanwhile): nothing is taken,
 * signed or stored, for a transaction sent for a settled anchor would stay open for good, or anchor it twice.
 */
export async function reissueAnchor(
  db: Database,
  slot: Slot,
  anchorId: string,
  sign: (nonce: number) => Promise<SignedTransaction>,
): Promise<{ nonce: number; tx: SignedTransaction } | undefined> {
  return db
    .transaction(async (tx) => {
      const nonce = await takeNonce(tx, slot)
      // The nonce row, then the anchor, then its transactions, as everywhere (reserve_anchors, mark_mined,
      // withdrawAnchor): one lock order, no deadlock.
      const [pending] = await rows(
        tx,
        sql`SELECT 1 FROM anchors WHERE id = ${anchorId} AND ${leaves(ANCHOR.nonceTaken)} FOR UPDATE`,
      )
      // Undone whole: the nonce taken above goes back.
      if (!pending) throw new AnchorSettled()
      const signed = await sign(nonce)
      await tx.execute(
        sql`UPDATE anchors SET tx_hash = ${signed.hash}, nonce = ${nonce}, relayer_address = ${slot.relayer},
                   status = ${ANCHOR.nonceTaken.to}, updated_at = now()
            WHERE id = ${anchorId}`,
      )
      await tx.execute(
        sql`UPDATE relay_transactions SET status = ${TRANSACTION.nonceTaken.to}
            WHERE anchor_id = ${anchorId} AND ${leaves(TRANSACTION.nonceTaken)}`,
      )
      await insertRelayTransaction(tx, slot, { anchorId, nonce, signed })
      return { nonce, tx: signed }
    })
    .catch((error: unknown) => {
      if (error instanceof AnchorSettled) return undefined
      throw error
    })
}

/** Thrown inside reissueAnchor's transaction to undo it: the anchor was no longer pending. */
class AnchorSettled extends Error {}
