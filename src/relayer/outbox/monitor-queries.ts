// What the monitor reads and writes in the outbox: its work lists (open transactions, unsigned reservations, recent
// confirmations) and the state changes of re-sending, replacing and reopening transactions.
import { sql } from 'drizzle-orm'
import type { Address, Hex } from 'viem'
import type { Database } from '../../db/database.ts'
import { UNSIGNED_PREFIX } from '../../db/schema.ts'
import { rows } from '../../db/sql-rows.ts'
import type { Fees } from '../fees.ts'
import type { SignedTransaction } from '../signing.ts'
import { insertRelayTransaction } from './relay-transactions.ts'
import type { Slot } from './slot.ts'
import { ANCHOR_TRANSITIONS as ANCHOR, leaves, RELAY_TRANSACTION_TRANSITIONS as TRANSACTION } from './transitions.ts'

/** Anchors reserved but never signed (their request died in between), older than `olderThanMs`. */
export async function unsignedAnchors(
  db: Database,
  chainId: number,
  olderThanMs: number,
): Promise<{ id: string; relayer: Address; nonce: number; compositeHash: Hex; previousTxHash: Hex }[]> {
  const found = await rows(
    db,
    sql`SELECT id, relayer_address, nonce, composite_hash, previous_tx_hash FROM anchors
        WHERE chain_id = ${chainId} AND status = 'pending' AND tx_hash LIKE ${`${UNSIGNED_PREFIX}%`}
          AND created_at < now() - make_interval(secs => ${olderThanMs / 1000})`,
  )
  return found.map((r) => ({
    id: String(r.id),
    relayer: r.relayer_address as Address,
    nonce: Number(r.nonce),
    compositeHash: r.composite_hash as Hex,
    previousTxHash: r.previous_tx_hash as Hex,
  }))
}

/** A filler is done: its self-transfer mined, or another transaction of the key used its nonce. */
export async function markFillerDone(db: Database, txHash: string, outcome: 'mined' | 'outrun'): Promise<void> {
  const transition = outcome === 'mined' ? TRANSACTION.fillerMined : TRANSACTION.fillerOutrun
  await db.execute(
    sql`UPDATE relay_transactions SET status = ${transition.to} WHERE tx_hash = ${txHash} AND ${leaves(transition)}`,
  )
}

/**
 * Claims a transaction only the relay request has sent so far ('signed') before anyone else sends it: a request whose
 * send failed withdraws its anchor only while nothing was claimed, so a transaction is never both re-sent and undone.
 * False when the request withdrew it (or a relay reused a filler's nonce) first.
 */
export async function claimForBroadcast(db: Database, txHash: string): Promise<boolean> {
  const claimed = await rows(
    db,
    sql`UPDATE relay_transactions SET status = ${TRANSACTION.claimed.to}, broadcast_at = now()
        WHERE tx_hash = ${txHash} AND ${leaves(TRANSACTION.claimed)} RETURNING 1`,
  )
  return claimed.length > 0
}

/**
 * Stores a fee-bumped replacement before it is broadcast; the anchor shows the newest (provisional) hash. False when
 * the anchor is gone (its request withdrew it meanwhile) or no longer pending (one of its transactions was mined since
 * the monitor looked): nothing is stored, and nothing may be sent, for a replacement of a settled anchor would stay
 * open for good.
 */
export async function addReplacement(
  db: Database,
  slot: Slot,
  params: { anchorId: string | null; nonce: number },
  signed: SignedTransaction,
): Promise<boolean> {
  return db.transaction(async (tx) => {
    if (params.anchorId !== null) {
      // The anchor before its transactions, as everywhere: one lock order. A withdrawn anchor takes its rows with it.
      const locked = await rows(
        tx,
        sql`SELECT 1 FROM anchors WHERE id = ${params.anchorId} AND ${leaves(ANCHOR.feeBumped)} FOR UPDATE`,
      )
      if (locked.length === 0) return false
    }
    await insertRelayTransaction(tx, slot, { ...params, signed, broadcast: true })
    if (params.anchorId !== null) {
      await tx.execute(
        sql`UPDATE anchors SET tx_hash = ${signed.hash}, updated_at = now() WHERE id = ${params.anchorId}`,
      )
    }
    return true
  })
}

export interface OpenTransaction {
  txHash: Hex
  anchorId: string | null
  anchorStatus: 'pending' | 'confirmed' | 'failed' | null
  /** What the anchor's event must carry (null for a filler). */
  compositeHash: string | null
  previousTxHash: string | null
  relayer: Address
  nonce: number
  raw: Hex
  fees: Fees
  status: 'signed' | 'broadcast'
  createdAt: Date
}

/** Every transaction not yet known mined or replaced, oldest nonce first: the monitor's work list. */
export async function openTransactions(db: Database, chainId: number): Promise<OpenTransaction[]> {
  const found = await rows(
    db,
    sql`SELECT r.tx_hash, r.anchor_id, a.status AS anchor_status, a.composite_hash, a.previous_tx_hash,
               r.relayer_address, r.nonce, r.raw_transaction, r.max_fee_per_gas, r.max_priority_fee_per_gas, r.status,
               r.created_at
        FROM relay_transactions r LEFT JOIN anchors a ON a.id = r.anchor_id
        WHERE r.chain_id = ${chainId} AND r.status IN ('signed', 'broadcast')
        ORDER BY r.relayer_address, r.nonce, r.created_at`,
  )
  return found.map((r) => ({
    txHash: r.tx_hash as Hex,
    anchorId: r.anchor_id === null ? null : String(r.anchor_id),
    anchorStatus: (r.anchor_status ?? null) as OpenTransaction['anchorStatus'],
    compositeHash: (r.composite_hash ?? null) as string | null,
    previousTxHash: (r.previous_tx_hash ?? null) as string | null,
    relayer: r.relayer_address as Address,
    nonce: Number(r.nonce),
    raw: r.raw_transaction as Hex,
    fees: {
      maxFeePerGas: BigInt(String(r.max_fee_per_gas)),
      maxPriorityFeePerGas: BigInt(String(r.max_priority_fee_per_gas)),
    },
    status: r.status as OpenTransaction['status'],
    createdAt: new Date(r.created_at as string),
  }))
}

export interface RecentConfirmed {
  anchorId: string
  txHash: Hex
  blockNumber: number
  compositeHash: string
  previousTxHash: string
}

/** Confirmed anchors recent enough that a reorg could still remove them. */
export async function recentConfirmed(db: Database, chainId: number, sinceBlock: number): Promise<RecentConfirmed[]> {
  const found = await rows(
    db,
    sql`SELECT id, tx_hash, block_number, composite_hash, previous_tx_hash FROM anchors
        WHERE chain_id = ${chainId} AND status = 'confirmed' AND block_number >= ${sinceBlock}`,
  )
  return found.map((r) => ({
    anchorId: String(r.id),
    txHash: r.tx_hash as Hex,
    blockNumber: Number(r.block_number),
    compositeHash: String(r.composite_hash),
    previousTxHash: String(r.previous_tx_hash),
  }))
}

/** Puts a confirmed anchor's mined transaction back on the open list after a reorg removed it (same hash). */
/** At most this many anchors are finalized per pass: a long-stopped monitor catches up over several. */
const FINALIZED_PER_PASS = 1_000

/**
 * Marks confirmed anchors in blocks up to `throughBlock` final, telling each owner `anchor.finalized` in the same
 * statement; how many were.
 */
export async function finalizeAnchors(
  db: Database,
  chainId: number,
  throughBlock: number,
  contract: string,
): Promise<number> {
  const finalized = await rows(
    db,
    sql`WITH final AS (
          UPDATE anchors SET finalized_at = now()
          WHERE id IN (
            SELECT id FROM anchors
            WHERE chain_id = ${chainId} AND status = 'confirmed' AND finalized_at IS NULL
              AND block_number <= ${throughBlock}
            ORDER BY block_number LIMIT ${FINALIZED_PER_PASS}
          )
          RETURNING id
        )
        SELECT anchor_event(id, 'anchor.finalized', ${contract.toLowerCase()}, NULL) FROM final`,
  )
  return finalized.length
}

export async function reopenMined(db: Database, txHash: string, contract: string): Promise<void> {
  const { reorged } = TRANSACTION
  // The owner is told in the same statement, once per reopening, naming the block the transaction left.
  await db.execute(
    sql`WITH reopened AS (
          UPDATE relay_transactions SET status = ${reorged.to} WHERE tx_hash = ${txHash} AND ${leaves(reorged)}
          RETURNING anchor_id
        )
        SELECT anchor_event(anchor_id, 'anchor.reorged', ${contract.toLowerCase()}, NULL)
        FROM reopened WHERE anchor_id IS NOT NULL`,
  )
}
