// What the database knows about a document's chain: an index to prefetch from, never the truth.
import type { IdentityAttestation } from '@docanchor/client'
import type { Hash } from 'viem'
import type { RawQuery } from '../db/database.ts'
import { parseTxHashParam } from './tx-hash-param.ts'

export interface IndexedChain {
  /** The requested anchor first, then its predecessors as the database links them, as far as it knows them. */
  chain: { txHash: Hash; compositeHash: Hash }[]
  /** The stored ciphertext of the requested anchor; undefined when the database has no row for it or erased it. */
  encryptedPayload: string | undefined
  /** The requested anchor's ciphertext was erased with its signer's account. */
  payloadErased: boolean
  /** Anchors the database records as naming the requested one as their previous. */
  successors: Hash[]
  /** The attestation of every anchor above that has one, with the composite hash it was stored for. */
  attestations: Map<Hash, { compositeHash: Hash; attestation: IdentityAttestation }>
}

interface IndexRow {
  kind: 'chain' | 'successor'
  tx_hash: string
  composite_hash: string
  encrypted_payload: string | null
  payload_erased: boolean
  identity_commitment: string | null
  attested_trust: string | null
  attested_verified: boolean | null
}

/**
 * One call of verify_index (drizzle/functions/verify_index.sql): the recursive walk through `previous_tx_hash` and the
 * successors, bounded by the given limits.
 */
export async function readIndexedChain(
  query: RawQuery,
  txHash: Hash,
  limits: { maxDepth: number; maxSuccessors: number },
): Promise<IndexedChain> {
  // Literals rather than parameters (database.ts says why): checked here, so that nothing else can reach the text.
  if (
    parseTxHashParam(txHash) !== txHash ||
    !Number.isSafeInteger(limits.maxDepth) ||
    !Number.isSafeInteger(limits.maxSuccessors)
  ) {
    throw new TypeError('readIndexedChain takes a lower-case transaction hash and integer limits')
  }
  const indexRows = await query<IndexRow>(
    `SELECT * FROM verify_index('${txHash}', ${limits.maxDepth}, ${limits.maxSuccessors})`,
  )
  const indexed: IndexedChain = {
    chain: [],
    encryptedPayload: undefined,
    payloadErased: false,
    successors: [],
    attestations: new Map(),
  }
  for (const row of indexRows) {
    if (row.identity_commitment !== null && row.attested_trust !== null && row.attested_verified !== null) {
      indexed.attestations.set(row.tx_hash as Hash, {
        compositeHash: row.composite_hash as Hash,
        attestation: {
          trust: row.attested_trust as IdentityAttestation['trust'],
          verified: row.attested_verified,
          identityCommitment: row.identity_commitment,
        },
      })
    }
    if (row.kind === 'successor') {
      indexed.successors.push(row.tx_hash as Hash)
      continue
    }
    if (indexed.chain.length === 0) {
      indexed.encryptedPayload = row.encrypted_payload ?? undefined
      indexed.payloadErased = row.payload_erased
    }
    indexed.chain.push({ txHash: row.tx_hash as Hash, compositeHash: row.composite_hash as Hash })
  }
  return indexed
}

/** A successor as the database knows it, with what the service attests of the account that relayed it. */
export interface SuccessorRow {
  tx_hash: string
  composite_hash: string
  identity_commitment: string | null
  attested_trust: string | null
  attested_verified: boolean | null
}

/** How many anchors the database knows that name `txHash` as their previous (failed relays aside). */
export async function countSuccessors(query: RawQuery, txHash: Hash): Promise<number> {
  if (parseTxHashParam(txHash) !== txHash) throw new TypeError('countSuccessors takes a lower-case transaction hash')
  const [row] = await query<{ n: number | string }>(
    `SELECT count(*) AS n FROM anchors WHERE previous_tx_hash = '${txHash}' AND status <> 'failed'`,
  )
  return Number(row?.n ?? 0)
}

/**
 * The successors of `txHash` from the `offset`-th on, in the order verify_index lists them (when relayed, then the
 * hash), `limit` at most: the pages after the ones a verification lists.
 */
export async function readSuccessorPage(
  query: RawQuery,
  txHash: Hash,
  offset: number,
  limit: number,
): Promise<SuccessorRow[]> {
  if (parseTxHashParam(txHash) !== txHash || !Number.isSafeInteger(offset) || !Number.isSafeInteger(limit)) {
    throw new TypeError('readSuccessorPage takes a lower-case transaction hash and integer bounds')
  }
  return query<SuccessorRow>(
    `SELECT tx_hash, composite_hash, identity_commitment, attested_trust, attested_verified
       FROM anchors WHERE previous_tx_hash = '${txHash}' AND status <> 'failed'
      ORDER BY created_at, tx_hash OFFSET ${offset} LIMIT ${limit}`,
  )
}
