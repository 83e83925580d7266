// The relayer's database side: anchors, the outbox of signed transactions, the nonce authority and quota counters.
// Every function is one transaction or one statement, so a failure leaves nothing half-written.
import type { IdentityAttestation } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Address, Hex } from 'viem'
import type { Database } from '../db/database.ts'
import type { Fees } from './fees.ts'

export interface SignedTransaction {
  raw: Hex
  hash: Hex
  fees: Fees
}

export interface AnchorRow {
  id: string
  txHash: string
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
  userId: string | null
  status: 'pending' | 'confirmed' | 'failed'
  blockNumber: number | null
  relayerAddress: string
  nonce: number
  /** The service's attestation of the relaying account; null when the relay sent no salt. */
  attestation: IdentityAttestation | null
  createdAt: Date
}

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

export interface Slot {
  chainId: number
  relayer: Address
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

type Row = Record<string, unknown>

async function rows(db: Pick<Database, 'execute'>, query: ReturnType<typeof sql>): Promise<Row[]> {
  const result = (await db.execute(query)) as unknown as { rows: Row[] }
  return result.rows
}

/** UTC month of `now`, and when its quota resets. */
export function quotaPeriod(now = new Date()): { period: string; resetsAt: Date } {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  return {
    period: `${year}-${String(month + 1).padStart(2, '0')}-01`,
    resetsAt: new Date(Date.UTC(year, month + 1, 1)),
  }
}

/** The tx_hash an anchor holds between its reservation and its signed transaction: never a real hash. */
export const UNSIGNED_PREFIX = 'unsigned:'

/**
 * Counts each anchor against its user's quota, takes a nonce and stores the anchor holding it: one call of
 * `reserve_anchors` (drizzle/0003_repeat_before_quota.sql) for the whole batch, one transaction, so concurrent relays
 * share it and the relayer's nonce row is locked only while it runs. An item whose composite hash is taken is undone on its
 * own, count and nonce with it. Signing (about 1 ms of CPU each) happens afterwards, so no lock is held across it;
 * `attachSigned` then stores the signed transactions before anyone sends them.
 */
export async function reserveAnchors(
  db: Database,
  slot: Slot,
  anchors: NewAnchor[],
  quota: Quota,
): Promise<ReserveResult[]> {
  if (anchors.length === 0) return []
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

/**
 * Runs a batch again when PostgreSQL aborted it to break a deadlock (it undid all of it). reserve_anchors takes its
 * locks in one order, so only a rare composite hash raced across relayers and users at once can still meet one.
 */
async function withDeadlockRetry<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work()
    } catch (error) {
      if (attempt >= attempts || !hasCode(error, '40P01')) throw error
    }
  }
}

function hasCode(error: unknown, code: string): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 5; depth++) {
    if ((current as Error & { code?: string }).code === code) return true
    current = current.cause
  }
  return false
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

/** The nonce authority (`take_nonce` in drizzle/0001_relay_functions.sql): a reused filler's nonce, else a fresh one. */
async function takeNonce(tx: Database, slot: Slot): Promise<number> {
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
      await insertFiller(tx as unknown as Database, slot, params.nonce, await signFiller(params.nonce))
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

async function insertFiller(tx: Database, slot: Slot, nonce: number, signed: SignedTransaction): Promise<void> {
  await tx.execute(
    sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                        max_fee_per_gas, max_priority_fee_per_gas)
        VALUES (${signed.hash}, NULL, ${slot.chainId}, ${slot.relayer}, ${nonce}, ${signed.raw},
                ${signed.fees.maxFeePerGas.toString()}, ${signed.fees.maxPriorityFeePerGas.toString()})`,
  )
}

/**
 * Brings the nonce row in line with the chain: up to the chain's count when the key was used elsewhere (never below
 * it), and a filler for every nonce handed out that has no transaction at all, so the chain never waits on a gap.
 */
export async function resyncNonce(
  db: Database,
  slot: Slot,
  chain: { latest: number; pending: number },
  signFiller: (nonce: number) => Promise<SignedTransaction>,
): Promise<{ raisedTo?: number; filled: number[] }> {
  return db.transaction(async (tx) => {
    await tx.execute(
      sql`INSERT INTO relayer_nonces (chain_id, relayer_address, next_nonce)
          VALUES (${slot.chainId}, ${slot.relayer}, ${chain.pending}) ON CONFLICT DO NOTHING`,
    )
    const [row] = await rows(
      tx,
      sql`SELECT next_nonce FROM relayer_nonces
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer} FOR UPDATE`,
    )
    const next = Number(row?.next_nonce)
    if (next < chain.pending) {
      await tx.execute(
        sql`UPDATE relayer_nonces SET next_nonce = ${chain.pending}, updated_at = now()
            WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}`,
      )
      return { raisedTo: chain.pending, filled: [] }
    }
    // A nonce is held by a transaction, or by an anchor reserved but not yet signed.
    const known = await rows(
      tx,
      sql`SELECT nonce FROM relay_transactions
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}
            AND nonce >= ${chain.latest} AND nonce < ${next}
          UNION
          SELECT nonce FROM anchors
          WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}
            AND nonce >= ${chain.latest} AND nonce < ${next}`,
    )
    const have = new Set(known.map((r) => Number(r.nonce)))
    const filled: number[] = []
    for (let nonce = chain.latest; nonce < next; nonce++) {
      if (have.has(nonce)) continue
      await insertFiller(tx as unknown as Database, slot, nonce, await signFiller(nonce))
      filled.push(nonce)
    }
    return { filled }
  })
}

export async function findAnchorByCompositeHash(db: Database, compositeHash: string): Promise<AnchorRow | undefined> {
  const [row] = await rows(db, sql`SELECT * FROM anchors WHERE composite_hash = ${compositeHash}`)
  return row ? toAnchor(row) : undefined
}

export async function findAnchorById(db: Database, id: string): Promise<AnchorRow | undefined> {
  const [row] = await rows(db, sql`SELECT * FROM anchors WHERE id = ${id}`)
  return row ? toAnchor(row) : undefined
}

export async function isConfirmedAnchor(db: Database, txHash: string): Promise<boolean> {
  const [row] = await rows(db, sql`SELECT 1 AS ok FROM anchors WHERE tx_hash = ${txHash} AND status = 'confirmed'`)
  return row !== undefined
}

export interface Mined {
  anchorId: string
  txHash: string
  blockNumber: number
  reverted: boolean
}

/**
 * Records the mined transactions of anchors (adopting whichever of an anchor's hashes got mined) in one call of
 * `mark_mined`; the anchors as they are now, in order (undefined for one that no longer exists).
 */
export async function markMined(db: Database, mined: Mined[]): Promise<(AnchorRow | undefined)[]> {
  if (mined.length === 0) return []
  const items = mined.map(({ anchorId, txHash, blockNumber, reverted }) => ({
    anchorId,
    txHash,
    blockNumber,
    status: reverted ? 'failed' : 'confirmed',
  }))
  const updated = await rows(db, sql`SELECT * FROM mark_mined(${JSON.stringify(items)}::jsonb)`)
  const byId = new Map(updated.map((row) => [String(row.id), toAnchor(row)]))
  return mined.map((m) => byId.get(m.anchorId))
}

export async function markFillerDone(db: Database, txHash: string, status: 'mined' | 'failed'): Promise<void> {
  await db.execute(sql`UPDATE relay_transactions SET status = ${status} WHERE tx_hash = ${txHash}`)
}

/**
 * Claims a transaction only the relay request has sent so far ('signed') before anyone else sends it: a request whose
 * send failed withdraws its anchor only while nothing was claimed, so a transaction is never both re-sent and undone.
 * False when the request withdrew it (or a relay reused a filler's nonce) first.
 */
export async function claimForBroadcast(db: Database, txHash: string): Promise<boolean> {
  const claimed = await rows(
    db,
    sql`UPDATE relay_transactions SET status = 'broadcast', broadcast_at = now()
        WHERE tx_hash = ${txHash} AND status = 'signed' RETURNING 1`,
  )
  return claimed.length > 0
}

/** Stores a fee-bumped replacement before it is broadcast; the anchor shows the newest (provisional) hash. */
export async function addReplacement(
  db: Database,
  slot: Slot,
  params: { anchorId: string | null; nonce: number },
  signed: SignedTransaction,
): Promise<void> {
  await db.transaction(async (tx) => {
    await tx.execute(
      sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                          max_fee_per_gas, max_priority_fee_per_gas, status, broadcast_at)
          VALUES (${signed.hash}, ${params.anchorId}, ${slot.chainId}, ${slot.relayer}, ${params.nonce}, ${signed.raw},
                  ${signed.fees.maxFeePerGas.toString()}, ${signed.fees.maxPriorityFeePerGas.toString()},
                  'broadcast', now())`,
    )
    if (params.anchorId !== null) {
      await tx.execute(
        sql`UPDATE anchors SET tx_hash = ${signed.hash}, updated_at = now()
            WHERE id = ${params.anchorId} AND status = 'pending'`,
      )
    }
  })
}

/** Moves an anchor whose nonce another transaction consumed onto a fresh nonce, with a newly signed transaction. */
export async function reissueAnchor(
  db: Database,
  slot: Slot,
  anchorId: string,
  sign: (nonce: number) => Promise<SignedTransaction>,
): Promise<{ nonce: number; tx: SignedTransaction }> {
  return db.transaction(async (tx) => {
    const nonce = await takeNonce(tx as unknown as Database, slot)
    const signed = await sign(nonce)
    // The anchor before its transactions, as everywhere (mark_mined, withdrawAnchor): one lock order, no deadlock.
    await tx.execute(
      sql`UPDATE anchors SET tx_hash = ${signed.hash}, nonce = ${nonce}, relayer_address = ${slot.relayer},
                 updated_at = now()
          WHERE id = ${anchorId}`,
    )
    await tx.execute(sql`UPDATE relay_transactions SET status = 'failed' WHERE anchor_id = ${anchorId}`)
    await tx.execute(
      sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                          max_fee_per_gas, max_priority_fee_per_gas)
          VALUES (${signed.hash}, ${anchorId}, ${slot.chainId}, ${slot.relayer}, ${nonce}, ${signed.raw},
                  ${signed.fees.maxFeePerGas.toString()}, ${signed.fees.maxPriorityFeePerGas.toString()})`,
    )
    return { nonce, tx: signed }
  })
}

export interface OpenTransaction {
  txHash: Hex
  anchorId: string | null
  anchorStatus: 'pending' | 'confirmed' | 'failed' | null
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
    sql`SELECT r.tx_hash, r.anchor_id, a.status AS anchor_status, r.relayer_address, r.nonce, r.raw_transaction,
               r.max_fee_per_gas, r.max_priority_fee_per_gas, r.status, r.created_at
        FROM relay_transactions r LEFT JOIN anchors a ON a.id = r.anchor_id
        WHERE r.chain_id = ${chainId} AND r.status IN ('signed', 'broadcast')
        ORDER BY r.relayer_address, r.nonce, r.created_at`,
  )
  return found.map((r) => ({
    txHash: r.tx_hash as Hex,
    anchorId: r.anchor_id === null ? null : String(r.anchor_id),
    anchorStatus: (r.anchor_status ?? null) as OpenTransaction['anchorStatus'],
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
}

/** Confirmed anchors recent enough that a reorg could still remove them. */
export async function recentConfirmed(db: Database, chainId: number, sinceBlock: number): Promise<RecentConfirmed[]> {
  const found = await rows(
    db,
    sql`SELECT id, tx_hash, block_number FROM anchors
        WHERE chain_id = ${chainId} AND status = 'confirmed' AND block_number >= ${sinceBlock}`,
  )
  return found.map((r) => ({ anchorId: String(r.id), txHash: r.tx_hash as Hex, blockNumber: Number(r.block_number) }))
}

/** Puts a confirmed anchor's mined transaction back on the open list after a reorg removed it (same hash). */
export async function reopenMined(db: Database, txHash: string): Promise<void> {
  await db.execute(sql`UPDATE relay_transactions SET status = 'broadcast' WHERE tx_hash = ${txHash}`)
}

function toAnchor(r: Row): AnchorRow {
  return {
    id: String(r.id),
    txHash: String(r.tx_hash),
    compositeHash: String(r.composite_hash),
    previousTxHash: String(r.previous_tx_hash),
    encryptedPayload: String(r.encrypted_payload),
    userId: r.user_id === null ? null : String(r.user_id),
    status: r.status as AnchorRow['status'],
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    relayerAddress: String(r.relayer_address),
    nonce: Number(r.nonce),
    attestation:
      r.identity_commitment === null || r.identity_commitment === undefined
        ? null
        : {
            trust: r.attested_trust as IdentityAttestation['trust'],
            verified: Boolean(r.attested_verified),
            identityCommitment: String(r.identity_commitment),
          },
    createdAt: new Date(r.created_at as string),
  }
}
