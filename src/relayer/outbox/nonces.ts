// The nonce authority's side of the outbox: the relayer's nonce row, and the fillers that keep a nonce no anchor holds.
import { sql } from 'drizzle-orm'
import type { Database } from '../../db/database.ts'
import { type Executor, rows } from '../../db/sql-rows.ts'
import type { SignedTransaction } from '../signing.ts'
import { insertRelayTransaction } from './relay-transactions.ts'
import type { Slot } from './slot.ts'
import { leaves, RELAY_TRANSACTION_TRANSITIONS as TRANSACTION } from './transitions.ts'

/** The nonce authority (`take_nonce`, drizzle/functions/take_nonce.sql): a reused filler's nonce, else a fresh one. */
export async function takeNonce(tx: Executor, slot: Slot): Promise<number> {
  const [taken] = await rows(tx, sql`SELECT take_nonce(${slot.chainId}, ${slot.relayer}) AS nonce`)
  return Number(taken!.nonce)
}

/** Creates the relayer's nonce row from the chain's count the first time this relayer is used on this chain. */
export async function ensureNonceRow(db: Database, slot: Slot, chainPendingCount: number): Promise<void> {
  await db.execute(
    sql`INSERT INTO relayer_nonces (chain_id, relayer_address, next_nonce)
        VALUES (${slot.chainId}, ${slot.relayer}, ${chainPendingCount})
        ON CONFLICT DO NOTHING`,
  )
}

/**
 * Brings the nonce row in line with the chain: up to the chain's count when the key was used elsewhere (never below
 * it), and a filler for every nonce handed out that has no transaction at all, so the chain never waits on a gap.
 * Only from the chain's pending count on: below it a node's pool holds a transaction of the key at every nonce, one
 * the database may have forgotten (a failover), which a filler would compete with.
 */
export async function resyncNonce(
  db: Database,
  slot: Slot,
  chainPending: number,
  signFiller: (nonce: number) => Promise<SignedTransaction>,
): Promise<{ raisedTo?: number; filled: number[] }> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`INSERT INTO relayer_nonces (chain_id, relayer_address, next_nonce)
          VALUES (${slot.chainId}, ${slot.relayer}, ${chainPending}) ON CONFLICT DO NOTHING`,
    )
    const [row] = await rows(
      tx,
      sql`SELECT next_nonce FROM relayer_nonces
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} FOR UPDATE`,
    )
    const next = Number(row?.next_nonce)
    if (next < chainPending) {
      await tx.execute(
        sql`UPDATE relayer_nonces SET next_nonce = ${chainPending}, updated_at = now()
            WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}`,
      )
      return { raisedTo: chainPending, filled: [] }
    }
    // A nonce is held by a transaction, or by an anchor reserved but not yet signed.
    const known = await rows(
      tx,
      sql`SELECT nonce FROM relay_transactions
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}
            AND nonce >= ${chainPending} AND nonce < ${next}
          UNION
          SELECT nonce FROM anchors
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}
            AND nonce >= ${chainPending} AND nonce < ${next}`,
    )
    const have = new Set(known.map((r) => Number(r.nonce)))
    const filled: number[] = []
    for (let nonce = chainPending; nonce < next; nonce++) {
      if (have.has(nonce)) continue
      await insertRelayTransaction(tx, slot, { anchorId: null, nonce, signed: await signFiller(nonce) })
      filled.push(nonce)
    }
    return { filled }
  })
}

/** Each key's next nonce as the nonce authority has it (a key without a row is absent). */
export async function nextNonces(db: Database, chainId: number): Promise<Map<string, number>> {
  const found = await rows(db, sql`SELECT relayer_address, next_nonce FROM relayer_nonces WHERE chain_id = ${chainId}`)
  return new Map(found.map((r) => [String(r.relayer_address), Number(r.next_nonce)]))
}

/**
 * The nonce authority past every nonce the chain consumed, after the database forgot some (src/relayer/actions/
 * reconcile.ts): the row raised to the chain's pending count, and unsent fillers below it retired (take_nonce would
 * hand their nonces out again, though the chain consumed them, or a node's pool holds a transaction of the key there
 * that the database forgot). Answers the row's value before, when it was lower.
 */
export async function nonceAuthorityPastChain(
  db: Database,
  slot: Slot,
  chain: { latest: number; pending: number },
): Promise<number | undefined> {
  await ensureNonceRow(db, slot, chain.pending)
  await db.execute(
    sql`UPDATE relay_transactions SET status = ${TRANSACTION.fillerPassed.to}
        WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} AND anchor_id IS NULL
          AND ${leaves(TRANSACTION.fillerPassed)} AND nonce < ${chain.pending}`,
  )
  const [row] = await rows(
    db,
    sql`UPDATE relayer_nonces AS n SET next_nonce = ${chain.pending}, updated_at = now()
        FROM (SELECT next_nonce FROM relayer_nonces
              WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} FOR UPDATE) AS old
        WHERE n.chain_id = ${slot.chainId} AND n.relayer_address = ${slot.relayer} AND n.next_nonce < ${chain.pending}
        RETURNING old.next_nonce AS was`,
  )
  return row ? Number(row.was) : undefined
}
