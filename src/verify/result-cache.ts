// Finished verify responses, kept serialized so a hit is sent as stored bytes without any work.
import { LRUCache } from 'lru-cache'

export interface CachedResult {
  /** 200, or the status of a cached problem (404 and 422 are cached briefly). */
  status: number
  /** The response body exactly as sent. */
  body: string
  /** Strong ETag of `body`, quotes included. */
  etag: string
  /** Epoch milliseconds until which the result is served as is; after it only as a fallback while the chain is down. */
  freshUntil: number
}

export interface ResultCache {
  get(key: string): Promise<CachedResult | undefined>
  /** Keeps `value` for `retainMs` (its fresh time plus any stale-if-error time). */
  set(key: string, value: CachedResult, retainMs: number): Promise<void>
}

/** The in-process default: one instance's results, bounded by entry count. */
export class LruResultCache implements ResultCache {
  readonly #entries: LRUCache<string, CachedResult>

  constructor(maxEntries: number) {
    this.#entries = new LRUCache({ max: maxEntries, ttlAutopurge: false })
  }

  async get(key: string): Promise<CachedResult | undefined> {
    return this.#entries.get(key)
  }

  async set(key: string, value: CachedResult, retainMs: number): Promise<void> {
    this.#entries.set(key, value, { ttl: retainMs })
  }
}
