// The links of chains already verified, kept in memory so that a repeated verify can send its receipt batch before
// the database lookup answers. Only ever a list of hashes to fetch: what a verify shows comes from receipts.
import { LRUCache } from 'lru-cache'
import type { Hash } from 'viem'

interface KnownAnchor {
  /**
   * The anchor's `previousTxHash` as its event recorded it. A transaction hash commits to its calldata, which the
   * event of an `anchor` call repeats, so this does not change for that hash; whether the transaction is (still) on
   * chain is what every receipt fetch checks. Were it ever wrong, it would cost a fetch, never a wrong answer.
   */
  previous: Hash
  /** The hashes the database listed as its successors when it was last verified (pending ones included). */
  successors: readonly Hash[]
}

export class ChainLinkIndex {
  readonly #anchors: LRUCache<Hash, KnownAnchor>

  /** `maxHashes` bounds the memory: an anchor counts as one, plus one per remembered successor. */
  constructor(maxHashes: number) {
    this.#anchors = new LRUCache({
      maxSize: maxHashes,
      sizeCalculation: (anchor) => 1 + anchor.successors.length,
    })
  }

  /** The previous hash an anchor read from a receipt names; undefined when not (or no longer) remembered. */
  previousOf(txHash: Hash): Hash | undefined {
    return this.#anchors.get(txHash)?.previous
  }

  successorsOf(txHash: Hash): readonly Hash[] {
    return this.#anchors.get(txHash)?.successors ?? []
  }

  /** Remembers a link read from a receipt of this contract's anchor (never one the database claims). */
  rememberLink(txHash: Hash, previous: Hash): void {
    const known = this.#anchors.get(txHash)
    if (known?.previous !== previous) this.#anchors.set(txHash, { previous, successors: known?.successors ?? [] })
  }

  /** Remembers what the database listed as successors of an anchor whose link is remembered. */
  rememberSuccessors(txHash: Hash, successors: readonly Hash[]): void {
    const known = this.#anchors.get(txHash)
    if (known === undefined || sameHashes(known.successors, successors)) return
    this.#anchors.set(txHash, { previous: known.previous, successors: [...successors] })
  }
}

function sameHashes(a: readonly Hash[], b: readonly Hash[]): boolean {
  return a.length === b.length && a.every((hash, i) => hash === b[i])
}
