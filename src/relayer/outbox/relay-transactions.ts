// The outbox's record of a signed transaction: one row of relay_transactions per hash a relayer signed, whether it
// carries an anchor, replaces one at a higher fee, or fills a nonce no anchor holds.
import { sql } from 'drizzle-orm'
import type { Executor } from '../../db/sql-rows.ts'
import type { SignedTransaction } from '../signing.ts'
import type { Slot } from './nonces.ts'

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
