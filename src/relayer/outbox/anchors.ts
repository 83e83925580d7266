// Reading and confirming anchors: the rows the relay answers with, and the batch that records mined transactions.
import type { IdentityAttestation } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Database } from '../../db/database.ts'
import { UNSIGNED_PREFIX } from '../../db/schema.ts'
import { rows } from '../../db/sql-rows.ts'
import { ANCHOR_TRANSITIONS } from './transitions.ts'

export interface AnchorRow {
  id: string
  txHash: string
  compositeHash: string
  previousTxHash: string
  /** Null once erased with its signer's account. */
  encryptedPayload: string | null
  userId: string | null
  status: 'pending' | 'confirmed' | 'failed'
  blockNumber: number | null
  relayerAddress: string
  nonce: number
  /** The service's attestation of the relaying account; null when the relay sent no salt. */
  attestation: IdentityAttestation | null
  /** Recorded from the chain after the database had forgotten it: no ciphertext, no owner. */
  reconciled: boolean
  createdAt: Date
}

export async function findAnchorByCompositeHash(db: Database, compositeHash: string): Promise<AnchorRow | undefined> {
  const [row] = await rows(db, sql`SELECT * FROM anchors WHERE composite_hash = ${compositeHash}`)
  return row ? toAnchor(row) : undefined
}

/** The user's own anchor, for GET /api/anchors/:compositeHash; a reservation not yet signed has nothing to show. */
export async function findOwnAnchor(
  db: Database,
  userId: string,
  compositeHash: string,
): Promise<AnchorRow | undefined> {
  const anchor = await findAnchorByCompositeHash(db, compositeHash)
  // Its request answers once it has a transaction.
  if (anchor?.txHash.startsWith(UNSIGNED_PREFIX)) return undefined
  return anchor?.userId === userId ? anchor : undefined
}

/** The anchor whose (current) transaction is `txHash`, lower-case. */
export async function findAnchorByTxHash(db: Database, txHash: string): Promise<AnchorRow | undefined> {
  const [row] = await rows(db, sql`SELECT * FROM anchors WHERE tx_hash = ${txHash}`)
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
  blockHash: string
  /** Where its DocumentAnchored event sits in the block; null when it has none (it failed). */
  logIndex: number | null
  /** The receipt holds the anchor's DocumentAnchored event; otherwise the anchor failed (reverted, or no contract). */
  confirmed: boolean
}

/**
 * Records the mined transactions of anchors (adopting whichever of an anchor's hashes got mined) in one call of
 * `mark_mined`, with the events their owners are told (src/events/); the anchors as they are now, in order (undefined
 * for one that no longer exists). `contract`: the contract the events were read from.
 */
export async function markMined(db: Database, mined: Mined[], contract: string): Promise<(AnchorRow | undefined)[]> {
  if (mined.length === 0) return []
  const items = mined.map(({ anchorId, txHash, blockNumber, blockHash, logIndex, confirmed }) => ({
    anchorId,
    txHash,
    blockNumber,
    blockHash: blockHash.toLowerCase(),
    logIndex,
    status: confirmed ? ANCHOR_TRANSITIONS.mined.to : ANCHOR_TRANSITIONS.reverted.to,
    contract: contract.toLowerCase(),
  }))
  const updated = await rows(db, sql`SELECT * FROM mark_mined(${JSON.stringify(items)}::jsonb)`)
  const byId = new Map(updated.map((row) => [String(row.id), toAnchor(row)]))
  return mined.map((m) => byId.get(m.anchorId))
}

function toAnchor(r: Record<string, unknown>): AnchorRow {
  return {
    id: String(r.id),
    txHash: String(r.tx_hash),
    compositeHash: String(r.composite_hash),
    previousTxHash: String(r.previous_tx_hash),
    encryptedPayload: r.encrypted_payload === null ? null : String(r.encrypted_payload),
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
    reconciled: r.reconciled_at !== null && r.reconciled_at !== undefined,
    createdAt: new Date(r.created_at as string),
  }
}
