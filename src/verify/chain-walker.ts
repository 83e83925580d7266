// Walks a document's signature chain from the requested anchor back to its first, checking every link on chain.
import type { IdentityAttestation } from '@docanchor/client'
import type { Hash } from 'viem'
import type { Database } from '../db/database.ts'
import { type AnchorRecord, type ChainEntry, toChainEntry, ZERO_HASH } from './anchor-entry.ts'
import { readIndexedChain } from './anchor-index.ts'
import type { AnchorReader } from './anchor-reader.ts'
import { AnchorNotFoundError, ChainTooDeepError } from './errors.ts'

export interface WalkDependencies {
  db: Database
  reader: AnchorReader
  maxDepth: number
  maxSuccessors: number
}

/** A chain entry with what the service attests about the account that relayed it (null: nothing, or unknown). */
export interface AttestedEntry extends ChainEntry {
  attestation: IdentityAttestation | null
}

export interface VerifiedChain {
  anchor: AttestedEntry
  /** First signature to the requested one, inclusive. */
  chain: AttestedEntry[]
  /** Anchors naming the requested one as previous, confirmed on chain, in chain order. */
  successors: AttestedEntry[]
  /** Byte for byte as stored; null when the service holds none for this anchor. */
  encryptedPayload: string | null
}

/**
 * One database query gives the links the service knows; every receipt they name is fetched in one batched round
 * trip. The walk itself follows only the events' own `previousTxHash`: a database link that disagrees with the
 * chain is simply not used, and links the database does not know are fetched one step at a time.
 */
export async function walkChain(deps: WalkDependencies, txHash: Hash): Promise<VerifiedChain> {
  const indexed = await readIndexedChain(deps.db, txHash, deps)
  const known = await deps.reader.read([txHash, ...indexed.chain.map((link) => link.txHash), ...indexed.successors])
  const requested = known.get(txHash)
  if (!requested) throw new AnchorNotFoundError(`Transaction ${txHash} holds no anchor of this contract`)

  const chain: AnchorRecord[] = [requested]
  const seen = new Set<Hash>([txHash])
  let current = requested
  while (current.previousTxHash !== ZERO_HASH) {
    if (chain.length >= deps.maxDepth) {
      throw new ChainTooDeepError(`The chain of ${txHash} is longer than ${deps.maxDepth} anchors`)
    }
    const previous = current.previousTxHash
    // Transaction hashes commit to their data, so a real chain cannot loop; a repeat means a broken link.
    let found = seen.has(previous) ? null : known.get(previous)
    if (found === undefined) found = (await deps.reader.read([previous])).get(previous)
    if (!found) {
      throw new AnchorNotFoundError(
        `The chain of ${txHash} links to ${previous}, which holds no anchor of this contract`,
      )
    }
    seen.add(previous)
    chain.push(found)
    current = found
  }
  chain.reverse()

  const successors = indexed.successors
    .map((hash) => known.get(hash))
    .filter((anchor): anchor is AnchorRecord => !!anchor && anchor.previousTxHash === txHash)
    .sort((a, b) =>
      a.blockNumber === b.blockNumber
        ? a.transactionIndex - b.transactionIndex
        : a.blockNumber < b.blockNumber
          ? -1
          : 1,
    )

  // The stored ciphertext belongs to the row's composite hash; it is returned only when the chain agrees.
  const row = indexed.chain[0]
  const payloadMatches = row?.txHash === txHash && row.compositeHash === requested.compositeHash
  // Like the ciphertext, an attestation belongs to the composite hash its row was stored for.
  const attested = (record: AnchorRecord): AttestedEntry => {
    const stored = indexed.attestations.get(record.txHash)
    const attestation = stored?.compositeHash === record.compositeHash ? stored.attestation : null
    return { ...toChainEntry(record), attestation }
  }
  return {
    anchor: attested(requested),
    chain: chain.map(attested),
    successors: successors.map(attested),
    encryptedPayload: payloadMatches ? (indexed.encryptedPayload ?? null) : null,
  }
}
