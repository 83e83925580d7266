// With Redis, the results every instance shares, with this instance's own copy in front, so that a QR code scanned
// again costs no round trip (and is answered at once by `peek`). A result this instance writes is held as long as it
// is kept in Redis (its fresh time, then the stale-if-error time); one read from Redis is held until its fresh time
// ends, and never longer than this service's own cache time, whatever an entry in Redis claims. A copy is never served
// as fresh past its fresh time: after it, Redis is asked again.
import type { CachedResult, LruResultCache, ResultCache, SharedResultCache } from './result-cache.ts'

export interface TieredOptions {
  /** The longest a copy read from Redis is held (the service's cache time). */
  maxCopyMs: number
  now?: () => number
}

export class TieredResultCache implements ResultCache {
  readonly #local: LruResultCache
  readonly #shared: SharedResultCache
  readonly #maxCopyMs: number
  readonly #now: () => number

  constructor(local: LruResultCache, shared: SharedResultCache, options: TieredOptions) {
    this.#local = local
    this.#shared = shared
    this.#maxCopyMs = options.maxCopyMs
    this.#now = options.now ?? Date.now
  }

  peek(key: string): CachedResult | undefined {
    return this.#local.peek(key)
  }

  async get(key: string): Promise<CachedResult | undefined> {
    const held = this.#local.peek(key)
    if (held !== undefined && held.freshUntil > this.#now()) return held
    let stored: CachedResult | undefined
    try {
      stored = await this.#shared.get(key)
    } catch (error) {
      // With Redis down, an expired copy still serves as the stale fallback; with none, the caller sees the failure.
      if (held === undefined) throw error
      return held
    }
    const copyMs = stored === undefined ? 0 : Math.min(stored.freshUntil - this.#now(), this.#maxCopyMs)
    if (stored !== undefined && copyMs > 0) await this.#local.set(key, stored, copyMs)
    // An expired copy also serves as the stale fallback when Redis holds nothing newer.
    return stored ?? held
  }

  async set(key: string, value: CachedResult, retainMs: number): Promise<void> {
    await this.#local.set(key, value, retainMs)
    await this.#shared.set(key, value, retainMs)
  }

  /** Here and in Redis; another instance's local copy lives at most `maxCopyMs` longer. */
  async delete(key: string): Promise<void> {
    await this.#local.delete(key)
    await this.#shared.delete(key)
  }
}
