// What the database says about a chain (anchor-index.ts), remembered until anchors change, for an embedded database.
// PGlite runs every query on this thread (~0.2 ms for the lookup of a verification, most of it PGlite's own cost per
// statement), so a lookup holds back the node's answer that arrives meanwhile; and its one writer is this process,
// where a trigger announces every change to anchors (drizzle/0006_anchor_changes.sql): an answer remembered until
// then is the database's answer. PostgreSQL's lookup runs in its own process, and other instances write to it, so it is
// asked every time.

import { LRUCache } from 'lru-cache'
import type { Hash } from 'viem'
import type { IndexedChain } from './anchor-index.ts'

export class IndexedChainCache {
  readonly #entries: LRUCache<Hash, IndexedChain>
  /** Counts the changes announced, so that an answer read across one is never remembered. */
  #changes = 0

  constructor(maxEntries: number) {
    this.#entries = new LRUCache({ max: maxEntries })
  }

  /** The remembered answer; shared, so never changed by its readers. */
  get(txHash: Hash): IndexedChain | undefined {
    return this.#entries.get(txHash)
  }

  /** The answer `read` gives, remembered unless anchors changed while it was read. */
  async read(txHash: Hash, read: () => Promise<IndexedChain>): Promise<IndexedChain> {
    const changes = this.#changes
    const indexed = await read()
    if (changes === this.#changes) this.#entries.set(txHash, indexed)
    return indexed
  }

  /** Anchors changed: forgets every answer, and any being read now. */
  anchorsChanged(): void {
    this.#changes += 1
    this.#entries.clear()
  }
}
