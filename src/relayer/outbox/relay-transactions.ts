// The outbox's record of a signed transaction: one row of relay_transactions per hash a relayer signed, whether it
// carries an anchor, replaces one at a higher fee, or fills a nonce no anchor holds.
import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { type Executor, rows } from '../../db/sql-rows.ts'
import type { SignedTransaction } from '../signing.ts'
import type { Slot } from './slot.ts'

export interface RelayTransactionRow {
  /** null for a filler. */
  anchorId: string | null
  nonce: number
  signed: SignedTransaction
  /** Recorded as broadcast now (a replacement is stored just before it goes out); otherwise as signed. */
  broadcast?: boolean
}

export async function insertRelayTransaction(tx: Executor, slot: Slot, row: RelayTransactionRow): Promise<void> {
  const { signed } = row
  const broadcastColumns = row.broadcast ? sql`, status, broadcast_at` : sql``
  const broadcastValues = row.broadcast ? sql`, 'broadcast', now()` : sql``
  await tx.execute(
    sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                        max_fee_per_gas, max_priority_fee_per_gas${broadcastColumns})
        VALUES (${signed.hash}, ${row.anchorId}, ${slot.chainId}, ${slot.relayer}, ${row.nonce}, ${signed.raw},
                ${signed.fees.maxFeePerGas.toString()}, ${signed.fees.maxPriorityFeePerGas.toString()}${broadcastValues})`,
  )
}

export interface StoredTransaction {
  txHash: Hex
  nonce: number
  raw: Hex
  status: 'signed' | 'broadcast'
}

/**
 * The newest open transaction (signed, or broadcast and not yet known mined) of each nonce in [from, below): what fills
 * a gap on the node. A nonce without one is still being signed, or left unsigned by a request that died.
 */
export async function openTransactionsBetween(
  db: Executor,
  slot: Slot,
  from: number,
  below: number,
): Promise<Map<number, StoredTransaction>> {
  const found = await rows(
    db,
    sql`SELECT DISTINCT ON (nonce) tx_hash, nonce, raw_transaction, status FROM relay_transactions
        WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}
          AND nonce >= ${from} AND nonce < ${below} AND status IN ('signed', 'broadcast')
        ORDER BY nonce, created_at DESC`,
  )
  return new Map(
    found.map((r) => [
      Number(r.nonce),
      {
        txHash: r.tx_hash as Hex,
        nonce: Number(r.nonce),
        raw: r.raw_transaction as Hex,
        status: r.status as StoredTransaction['status'],
      },
    ]),
  )
}
