// Walks a document's signature chain from the requested anchor back to its first, checking every link on chain.
import { type AnchoredEvent, type IdentityAttestation, ZERO_TX_HASH } from '@docanchor/client'
import type { Hash } from 'viem'
import type { RawQuery } from '../db/database.ts'
import { type ChainEntry, toChainEntry } from './anchor-entry.ts'
import { countSuccessors, type IndexedChain, readIndexedChain, readSuccessorPage } from './anchor-index.ts'
import type { AnchorLookup, AnchorReader } from './anchor-reader.ts'
import type { ChainLinkIndex } from './chain-link-index.ts'
import { AnchorNotFoundError, ChainTooDeepError } from './errors.ts'
import type { IndexedChainCache } from './indexed-chain-cache.ts'

export interface WalkDependencies {
  /** Runs the index lookup (the database handle's `query`). */
  query: RawQuery
  reader: AnchorReader
  links: ChainLinkIndex
  maxDepth: number
  maxSuccessors: number
  /** Remembers the lookup's answers (an embedded database only: indexed-chain-cache.ts says why). */
  indexCache?: IndexedChainCache | undefined
}

/** A chain entry with what the service attests about the account that relayed it (null: nothing, or unknown). */
export interface AttestedEntry extends ChainEntry {
  attestation: IdentityAttestation | null
}

export interface VerifiedChain {
  anchor: AttestedEntry
  /** First signature to the requested one, inclusive. */
  chain: AttestedEntry[]
  /** Anchors naming the requested one as previous, confirmed on chain, in chain order: the first relayed. */
  successors: AttestedEntry[]
  /**
   * How many more anchors the service knows that name the requested one as previous, past the first
   * `maxSuccessors` relayed: anyone may anchor after any document, so these are listed on request
   * (successorPage), never dropped in silence.
   */
  moreSuccessors: number
  /** Byte for byte as stored; null when the service holds none for this anchor. */
  encryptedPayload: string | null
  /** The service erased this anchor's ciphertext at its signer's request (the account was deleted). */
  payloadErased: boolean
}

/**
 * One database query gives the links the service knows; every receipt they name is fetched in one batched round
 * trip. For a chain verified before, that batch follows the remembered links and leaves at once, alongside the
 * lookup, which still decides the ciphertext, the attestations and the successors; only what the lookup names beyond
 * those links costs a second round trip. The walk itself follows only the events' own `previousTxHash`: a link from
 * the database or from memory that disagrees with the chain is simply not used, and links nobody knows are fetched
 * one step at a time.
 */
export async function walkChain(deps: WalkDependencies, txHash: Hash): Promise<VerifiedChain> {
  const known = new Map<Hash, AnchorLookup>()
  const readInto = async (hashes: readonly Hash[]): Promise<void> => {
    for (const [hash, anchor] of await deps.reader.read(hashes)) {
      known.set(hash, anchor)
      if (anchor) deps.links.rememberLink(hash, anchor.previousTxHash)
    }
  }
  // A chain verified before: its receipts need not wait for the lookup (a first verify waits, as the lookup alone
  // can say what to fetch in one round trip).
  const early =
    deps.links.previousOf(txHash) === undefined
      ? []
      : [...predictedChain(txHash, known, deps, new Map()), ...deps.links.successorsOf(txHash)]
  const earlyRead = early.length > 0 ? readInto(early) : undefined
  const lookup = lookupIndex(deps, txHash)
  // Either failing fails the walk; Promise.all also handles the other's later rejection.
  const [indexed] = await Promise.all([lookup, earlyRead])
  const indexedLinks = new Map<Hash, Hash>()
  for (const [i, link] of indexed.chain.entries()) {
    const previous = indexed.chain[i + 1]
    if (previous) indexedLinks.set(link.txHash, previous.txHash)
  }
  const unknown = (hashes: readonly Hash[]) => hashes.filter((hash) => !known.has(hash))
  const missing = unknown([...predictedChain(txHash, known, deps, indexedLinks), ...indexed.successors])
  if (missing.length > 0) await readInto(missing)

  const requested = known.get(txHash)
  if (!requested) throw new AnchorNotFoundError(`Transaction ${txHash} holds no anchor of this contract`)
  deps.links.rememberSuccessors(txHash, indexed.successors)

  const chain: AnchoredEvent[] = [requested]
  const seen = new Set<Hash>([txHash])
  let current = requested
  while (current.previousTxHash !== ZERO_TX_HASH) {
    if (chain.length >= deps.maxDepth) {
      throw new ChainTooDeepError(`The chain of ${txHash} is longer than ${deps.maxDepth} anchors`)
    }
    const previous = current.previousTxHash
    // Transaction hashes commit to their data, so a real chain cannot loop; a repeat means a broken link.
    if (!seen.has(previous) && !known.has(previous)) {
      await readInto(unknown(predictedChain(previous, known, deps, indexedLinks)))
    }
    const found = seen.has(previous) ? null : known.get(previous)
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

  const successors = inChainOrder(
    indexed.successors
      .map((hash) => known.get(hash))
      .filter((anchor): anchor is AnchoredEvent => !!anchor && anchor.previousTxHash === txHash),
  )

  // The stored ciphertext belongs to the row's composite hash; it is returned only when the chain agrees.
  const row = indexed.chain[0]
  const payloadMatches = row?.txHash === txHash && row.compositeHash === requested.compositeHash
  // Like the ciphertext, an attestation belongs to the composite hash its row was stored for.
  const attested = (record: AnchoredEvent): AttestedEntry => {
    const stored = indexed.attestations.get(record.txHash)
    const attestation = stored?.compositeHash === record.compositeHash ? stored.attestation : null
    return { ...toChainEntry(record), attestation }
  }
  const moreSuccessors =
    indexed.successors.length < deps.maxSuccessors
      ? 0
      : Math.max(0, (await countSuccessors(deps.query, txHash)) - deps.maxSuccessors)
  return {
    anchor: attested(requested),
    chain: chain.map(attested),
    successors: successors.map(attested),
    moreSuccessors,
    encryptedPayload: payloadMatches ? (indexed.encryptedPayload ?? null) : null,
    payloadErased: payloadMatches && indexed.payloadErased,
  }
}

/**
 * The hashes the chain from `from` is expected to hold, as far as anything tells: the receipts already read, then
 * the remembered links, then the database's. What to fetch, never what to show.
 */
function predictedChain(
  from: Hash,
  known: ReadonlyMap<Hash, AnchorLookup>,
  deps: Pick<WalkDependencies, 'links' | 'maxDepth'>,
  indexedLinks: ReadonlyMap<Hash, Hash>,
): Hash[] {
  const hashes = new Set<Hash>()
  let hash: Hash | undefined = from
  while (hash !== undefined && hash !== ZERO_TX_HASH && hashes.size < deps.maxDepth && !hashes.has(hash)) {
    hashes.add(hash)
    const read = known.get(hash)
    hash = read === null ? undefined : (read?.previousTxHash ?? deps.links.previousOf(hash) ?? indexedLinks.get(hash))
  }
  return [...hashes]
}

/** The database's index of the chain, remembered or read. */
function lookupIndex(deps: WalkDependencies, txHash: Hash): Promise<IndexedChain> {
  const { indexCache } = deps
  const remembered = indexCache?.get(txHash)
  if (remembered !== undefined) return Promise.resolve(remembered)
  const read = () => readIndexedChain(deps.query, txHash, deps)
  // The batch is sent first and the lookup starts a tick later: node:http writes a request to its socket only on the
  // next tick, and PGlite runs a query on this thread, so a lookup started at once would hold the request back until
  // the query had finished, and nothing would overlap.
  return nextTick().then(() => (indexCache ? indexCache.read(txHash, read) : read()))
}

function nextTick(): Promise<void> {
  return new Promise((resolve) => process.nextTick(resolve))
}

function inChainOrder(anchors: AnchoredEvent[]): AnchoredEvent[] {
  return anchors.sort((a, b) =>
    a.blockNumber === b.blockNumber ? a.transactionIndex - b.transactionIndex : a.blockNumber < b.blockNumber ? -1 : 1,
  )
}

export interface SuccessorPage {
  /** Confirmed on chain, in chain order. */
  successors: AttestedEntry[]
  /** Where the next page starts; null when this was the last. */
  nextOffset: number | null
}

/**
 * The successors of `txHash` past the first `offset` the service knows (in the order relayed), each checked on chain
 * as a walk checks them: what a verification's `moreSuccessors` counts, a page at a time.
 */
export async function successorPage(deps: WalkDependencies, txHash: Hash, offset: number): Promise<SuccessorPage> {
  const rows = await readSuccessorPage(deps.query, txHash, offset, deps.maxSuccessors)
  const read = await deps.reader.read(rows.map((row) => row.tx_hash as Hash))
  const byHash = new Map(rows.map((row) => [row.tx_hash, row]))
  const confirmed = inChainOrder(
    [...read.values()].filter((anchor): anchor is AnchoredEvent => !!anchor && anchor.previousTxHash === txHash),
  )
  return {
    successors: confirmed.map((anchor) => {
      const row = byHash.get(anchor.txHash)
      const attested =
        row?.composite_hash === anchor.compositeHash &&
        row.identity_commitment !== null &&
        row.attested_trust !== null &&
        row.attested_verified !== null
      return {
        ...toChainEntry(anchor),
        attestation: attested
          ? {
              trust: row.attested_trust as IdentityAttestation['trust'],
              verified: row.attested_verified!,
              identityCommitment: row.identity_commitment!,
            }
          : null,
      }
    }),
    nextOffset: rows.length < deps.maxSuccessors ? null : offset + rows.length,
  }
}
