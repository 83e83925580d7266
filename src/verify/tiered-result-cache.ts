// With Redis, the results every instance shares, with this instance's own copy in front: a result read from or
// written to Redis is also held in process until its fresh time ends, so a hit on a QR code scanned again costs no
// round trip (and is answered at once by `peek`). A copy is never served past the fresh time its writer gave it, the
// same answer Redis would have given until then; after it, Redis is asked again.
import type { CachedResult, LruResultCache, ResultCache, SharedResultCache } from './result-cache.ts'

export class TieredResultCache implements ResultCache {
  readonly #local: LruResultCache
  readonly #shared: SharedResultCache
  readonly #now: () => number

  constructor(local: LruResultCache, shared: SharedResultCache, now: () => number = Date.now) {
    this.#local = local
    this.#shared = shared
    this.#now = now
  }

  peek(key: string): CachedResult | undefined {
    return this.#local.peek(key)
  }

  async get(key: string): Promise<CachedResult | undefined> {
    const held = this.#local.peek(key)
    if (held !== undefined && held.freshUntil > this.#now()) return held
    const stored = await this.#shared.get(key)
    const freshMs = stored === undefined ? 0 : stored.freshUntil - this.#now()
    if (stored !== undefined && freshMs > 0) await this.#local.set(key, stored, freshMs)
    // An expired copy still serves as the stale fallback when Redis holds nothing newer.
    return stored ?? held
  }

  async set(key: string, value: CachedResult, retainMs: number): Promise<void> {
    await this.#local.set(key, value, retainMs)
    await this.#shared.set(key, value, retainMs)
  }
}
