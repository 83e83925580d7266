// Finished verifications, kept serialized so a hit is sent as stored bytes without any work.
import { LRUCache } from 'lru-cache'
import type { VerifyErrorCode } from './errors.ts'

/** A verified chain: the answer's body exactly as sent, and its strong ETag (quotes included). */
export interface VerifiedResult {
  outcome: 'verified'
  body: string
  etag: string
  /** Epoch milliseconds until which it is served as is; after it only as a fallback while the chain is down. */
  freshUntil: number
}

/** A failure, remembered briefly like a result: asking again within seconds would get the same answer. */
export interface FailedResult {
  outcome: VerifyErrorCode
  /** The failure's message. */
  detail: string
  freshUntil: number
}

export type CachedResult = VerifiedResult | FailedResult

export interface ResultCache {
  get(key: string): Promise<CachedResult | undefined>
  /** What this process already holds for `key`, without waiting: lets a hit be answered with no promise on the hot path. */
  peek(key: string): CachedResult | undefined
  /** Keeps `value` for `retainMs` (its fresh time plus any stale-if-error time). */
  set(key: string, value: CachedResult, retainMs: number): Promise<void>
  /** Forgets `key`, stale fallback included: what it held must not be served again (an erased ciphertext). */
  delete(key: string): Promise<void>
}

/** A cache held elsewhere (Redis): nothing of it is in this process to peek at. */
export type SharedResultCache = Omit<ResultCache, 'peek'>

/** The in-process default: one instance's results, bounded by entry count. */
export class LruResultCache implements ResultCache {
  readonly #entries: LRUCache<string, CachedResult>

  constructor(maxEntries: number) {
    this.#entries = new LRUCache({ max: maxEntries, ttlAutopurge: false })
  }

  async get(key: string): Promise<CachedResult | undefined> {
    return this.peek(key)
  }

  peek(key: string): CachedResult | undefined {
    return this.#entries.get(key)
  }

  async set(key: string, value: CachedResult, retainMs: number): Promise<void> {
    this.#entries.set(key, value, { ttl: retainMs })
  }

  async delete(key: string): Promise<void> {
    this.#entries.delete(key)
  }
}
