// The database's side of a reconciliation with the chain (actions/reconcile.ts): where to start looking, which mined
// transactions it already knows, and recording one it forgot as a normal outbox entry the monitor then follows.
import { inArray, sql } from 'drizzle-orm'
import type { Address, Hex } from 'viem'
import type { Database } from '../../db/database.ts'
import { someCause } from '../../db/database-unavailable.ts'
import { withDeadlockRetry } from '../../db/deadlock-retry.ts'
import { anchors, relayTransactions, UNSIGNED_PREFIX } from '../../db/schema.ts'
import { type Executor, rows } from '../../db/sql-rows.ts'
import type { Fees } from '../fees.ts'
import type { SignedTransaction } from '../signing.ts'
import { insertRelayTransaction } from './relay-transactions.ts'
import type { Slot } from './slot.ts'
import { ANCHOR_TRANSITIONS as ANCHOR, leaves, RELAY_TRANSACTION_TRANSITIONS as TRANSACTION } from './transitions.ts'

/** A DocumentAnchored event of one of the service's keys, with its transaction as the chain holds it. */
export interface ChainAnchor {
  txHash: Hex
  compositeHash: Hex
  previousTxHash: Hex
  blockNumber: number
  blockHash: Hex
  /** Where its DocumentAnchored event sits in the block. */
  logIndex: number
  nonce: number
  raw: Hex
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
  /** Deep enough to count as confirmed; otherwise recorded pending, and the monitor confirms it. */
  final: boolean
}

export type RecordOutcome =
  /** No anchor had its composite hash: recorded without ciphertext or owner. */
  | { kind: 'recovered'; anchorId: string }
  /** An anchor of that composite hash held another transaction (or none yet): it now holds the mined one. */
  | { kind: 'adopted'; anchorId: string }
  /**
   * An anchor of that composite hash is confirmed under another transaction the database holds: the chain holds the
   * hash twice. The transaction is recorded as failed beside it, to be reported once and never followed.
   */
  | { kind: 'doubled'; anchorId: string }
  /** The database already knew it by the time the record was attempted. */
  | { kind: 'known' }

/**
 * The highest block at which the database knows a mined anchor of these keys: every transaction it could have
 * forgotten was stored after that anchor was recorded, so it was mined in that block or later.
 */
export async function highestKnownBlock(db: Database, chainId: number, relayers: Address[]): Promise<number | null> {
  const [row] = await rows(
    db,
    sql`SELECT max(block_number) AS block FROM anchors
        WHERE chain_id = ${chainId} AND block_number IS NOT NULL AND ${inArray(anchors.relayerAddress, relayers)}`,
  )
  return row?.block === null || row?.block === undefined ? null : Number(row.block)
}

/** Of `txHashes` (lower-case), those the outbox holds. */
export async function knownTransactions(db: Database, txHashes: Hex[]): Promise<Set<string>> {
  if (txHashes.length === 0) return new Set()
  const found = await rows(
    db,
    sql`SELECT tx_hash FROM relay_transactions WHERE ${inArray(relayTransactions.txHash, txHashes)}`,
  )
  return new Set(found.map((r) => String(r.tx_hash)))
}

/**
 * Signs a self-transfer of `relayer` at `nonce`, above `outbid` when given (what an anchor had sent there); undefined
 * when the key is not one this process holds.
 */
export type KeepNonce = (
  relayer: Address,
  nonce: number,
  outbid: Fees | undefined,
) => Promise<SignedTransaction | undefined>

/**
 * Records a mined transaction of `slot`'s key that the outbox does not hold. Another anchor on its nonce cannot be
 * mined there any more: it is moved to a fresh nonce, unsigned, and the monitor signs and sends it again. An anchor of
 * the same composite hash that held another nonce takes the mined transaction, and that nonce is kept by a filler
 * (`keepNonce`): left empty, it would hold back every later transaction of its key.
 */
export async function recordChainAnchor(
  db: Database,
  slot: Slot,
  found: ChainAnchor,
  keepNonce: KeepNonce,
  /** The contract the anchor was read from: named in the events its owner is told. */
  contract: string,
): Promise<RecordOutcome> {
  // Instances starting together reconcile together: another may record the same transaction first (a unique key
  // answers), or lock the same anchors in another order (a deadlock, undone whole: tried again). A relay that
  // reserved the composite hash between the look and the insert is an anchor to adopt: looked at once more.
  const attempt = () => withDeadlockRetry(() => recordOnce(db, slot, found, keepNonce, contract.toLowerCase()))
  return attempt()
    .catch((error: unknown) => {
      if (violated(error, 'anchors_composite_hash_unique')) return attempt()
      throw error
    })
    .catch((error: unknown) => {
      if (RECORDED_ELSEWHERE.some((constraint) => violated(error, constraint))) return { kind: 'known' as const }
      throw error
    })
}

/** The transaction, or its composite hash, recorded by another process between this one's look and its insert. */
const RECORDED_ELSEWHERE = ['anchors_composite_hash_unique', 'anchors_tx_hash_unique', 'relay_transactions_pkey']

function violated(error: unknown, constraint: string): boolean {
  return someCause(error, (current) => {
    const failure = current as Error & { code?: string; constraint?: string }
    return failure.code === '23505' && failure.constraint === constraint
  })
}

function recordOnce(
  db: Database,
  slot: Slot,
  found: ChainAnchor,
  keepNonce: KeepNonce,
  contract: string,
): Promise<RecordOutcome> {
  return db.transaction(async (tx) => {
    const [known] = await rows(tx, sql`SELECT 1 AS ok FROM relay_transactions WHERE tx_hash = ${found.txHash}`)
    if (known) return { kind: 'known' }
    const adopted = found.final ? ANCHOR.adoptedFinal : ANCHOR.adoptedShallow
    // Anchors before their transactions, as everywhere (mark_mined, withdrawAnchor): one lock order, no deadlock.
    const [owner] = await rows(
      tx,
      sql`SELECT id, status, tx_hash, relayer_address, nonce FROM anchors
          WHERE composite_hash = ${found.compositeHash} FOR UPDATE`,
    )
    const ownerId = owner ? String(owner.id) : null
    if (owner?.status === 'confirmed' && owner.tx_hash !== found.txHash) {
      await insertFound(tx, slot, found, String(owner.id), 'failed')
      return { kind: 'doubled', anchorId: String(owner.id) }
    }
    const occupants = await rows(
      tx,
      sql`SELECT id, status FROM anchors
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} AND nonce = ${found.nonce}
            AND id IS DISTINCT FROM ${ownerId}
          FOR UPDATE`,
    )
    // A filler holding the nonce is done, the nonce used: retired before an occupant takes a fresh nonce, which would
    // otherwise reuse that filler's.
    await tx.execute(
      sql`UPDATE relay_transactions SET status = ${TRANSACTION.fillerOutrun.to}
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} AND nonce = ${found.nonce}
            AND anchor_id IS NULL AND ${leaves(TRANSACTION.fillerOutrun)}`,
    )
    for (const occupant of occupants) {
      await tx.execute(
        sql`UPDATE anchors SET nonce = take_nonce(${slot.chainId}, ${slot.relayer}), status = ${ANCHOR.displaced.to},
                   tx_hash = ${UNSIGNED_PREFIX} || gen_random_uuid(), block_number = NULL, block_hash = NULL,
                   log_index = NULL, confirmed_at = NULL, finalized_at = NULL, updated_at = now()
            WHERE id = ${occupant.id} AND ${leaves(ANCHOR.displaced)}`,
      )
      // A confirmed anchor whose nonce the chain gave another transaction is no longer on chain: told as a reorg.
      if (occupant.status === 'confirmed') await anchorEvent(tx, String(occupant.id), 'anchor.reorged', contract)
      await replaceOpenTransactions(tx, String(occupant.id))
    }
    let anchorId: string
    if (ownerId) {
      anchorId = ownerId
      await keepVacatedNonce(tx, slot, found, owner!, keepNonce)
      await replaceOpenTransactions(tx, anchorId)
      const [updated] = await rows(
        tx,
        sql`UPDATE anchors SET tx_hash = ${found.txHash}, nonce = ${found.nonce}, relayer_address = ${slot.relayer},
                   status = ${adopted.to}, block_number = ${found.blockNumber}, block_hash = ${found.blockHash},
                   log_index = ${found.logIndex}, confirmed_at = ${found.final ? sql`now()` : sql`NULL`},
                   finalized_at = NULL, updated_at = now()
            WHERE id = ${anchorId} AND ${leaves(adopted)}
            RETURNING id`,
      )
      // Adopted confirmations deep: its owner is told, as mark_mined tells it (the monitor confirms a shallow one).
      if (updated && found.final) {
        await anchorEvent(tx, anchorId, 'anchor.confirmed', contract)
        await tx.execute(sql`SELECT countersigned_event(${anchorId}, ${contract})`)
      }
    } else {
      const [inserted] = await rows(
        tx,
        sql`INSERT INTO anchors (tx_hash, composite_hash, previous_tx_hash, encrypted_payload, reconciled_at, status,
                                 block_number, block_hash, log_index, chain_id, relayer_address, nonce, confirmed_at)
            VALUES (${found.txHash}, ${found.compositeHash}, ${found.previousTxHash}, NULL, now(), ${adopted.to},
                    ${found.blockNumber}, ${found.blockHash}, ${found.logIndex}, ${slot.chainId}, ${slot.relayer},
                    ${found.nonce},
                    ${found.final ? sql`now()` : sql`NULL`})
            RETURNING id`,
      )
      anchorId = String(inserted!.id)
    }
    await insertFound(tx, slot, found, anchorId, found.final ? 'mined' : 'broadcast')
    return ownerId ? { kind: 'adopted', anchorId } : { kind: 'recovered', anchorId }
  })
}

/**
 * The nonce an adopted anchor held, when it is not the one the chain mined for it: kept by a filler signed above
 * whatever the anchor had sent at that nonce (which, mined, would anchor the composite hash a second time).
 */
async function keepVacatedNonce(
  tx: Executor,
  slot: Slot,
  found: ChainAnchor,
  owner: Record<string, unknown>,
  keepNonce: KeepNonce,
): Promise<void> {
  if (owner.relayer_address === null || owner.nonce === null) return
  const held: Slot = { chainId: slot.chainId, relayer: String(owner.relayer_address) as Address }
  const nonce = Number(owner.nonce)
  if (held.relayer === slot.relayer && nonce === found.nonce) return
  const [sent] = await rows(
    tx,
    sql`SELECT max(max_fee_per_gas) AS max_fee, max(max_priority_fee_per_gas) AS max_priority
        FROM relay_transactions WHERE anchor_id = ${String(owner.id)} AND nonce = ${nonce}`,
  )
  const outbid =
    sent?.max_fee === null || sent?.max_fee === undefined
      ? undefined
      : { maxFeePerGas: BigInt(String(sent.max_fee)), maxPriorityFeePerGas: BigInt(String(sent.max_priority)) }
  const filler = await keepNonce(held.relayer, nonce, outbid)
  if (filler) await insertRelayTransaction(tx, held, { anchorId: null, nonce, signed: filler })
}

/** The anchor's transactions not mined yet are replaced: it holds another nonce, or the one the chain mined. */
function replaceOpenTransactions(tx: Executor, anchorId: string): Promise<unknown> {
  return tx.execute(
    sql`UPDATE relay_transactions SET status = ${TRANSACTION.superseded.to}
        WHERE anchor_id = ${anchorId} AND ${leaves(TRANSACTION.superseded)}`,
  )
}

function insertFound(
  tx: Executor,
  slot: Slot,
  found: ChainAnchor,
  anchorId: string,
  status: 'mined' | 'broadcast' | 'failed',
): Promise<unknown> {
  return tx.execute(
    sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                        max_fee_per_gas, max_priority_fee_per_gas, status, broadcast_at)
        VALUES (${found.txHash}, ${anchorId}, ${slot.chainId}, ${slot.relayer}, ${found.nonce}, ${found.raw},
                ${found.maxFeePerGas.toString()}, ${found.maxPriorityFeePerGas.toString()}, ${status}, now())`,
  )
}

/** An event of the anchor for its owner, in this transaction (drizzle/functions/anchor_event.sql). */
function anchorEvent(tx: Executor, anchorId: string, type: 'anchor.confirmed' | 'anchor.reorged', contract: string) {
  return tx.execute(sql`SELECT anchor_event(${anchorId}, ${type}, ${contract}, NULL)`)
}
