// Verification as the route serves it: cache first, one walk per hash at a time, results stored serialized.
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Counter } from 'prom-client'
import type { Hash } from 'viem'
import { ChainUnavailableError } from '../chain/chain-errors.ts'
import {
  type SuccessorPage,
  successorPage,
  type VerifiedChain,
  type WalkDependencies,
  walkChain,
} from './chain-walker.ts'
import { VerifyError, verifyErrorOf } from './errors.ts'
import type { CachedResult, ResultCache, VerifiedResult } from './result-cache.ts'
import { SingleFlight } from './single-flight.ts'

export interface VerifyServiceOptions {
  walk: WalkDependencies
  cache: ResultCache
  cacheTtlSeconds: number
  notFoundTtlSeconds: number
  staleIfErrorSeconds: number
  counters: { hits: Counter; misses: Counter; walks: Counter; staleServed: Counter }
  log: FastifyBaseLogger
  /** Tells the other instances (through Redis) that a transaction's ciphertext was erased; absent: no others. */
  announceErased?: (txHash: Hash) => Promise<void>
  now?: () => number
}

/** How many erased transactions are remembered, to keep a walk already under way from caching what was erased. */
const FORGOTTEN_REMEMBERED = 10_000

export class VerifyService {
  readonly #options: VerifyServiceOptions
  readonly #flights = new SingleFlight<CachedResult>()
  readonly #now: () => number
  /** Counts forgets; a walk that began before a transaction's latest forget must not cache or serve what it read. */
  #generation = 0
  readonly #forgottenIn = new Map<Hash, number>()

  constructor(options: VerifyServiceOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /**
   * The fresh verified answer for `txHash` if this process holds one, counted as a hit; undefined otherwise (then
   * `verify` has the answer). Synchronous, so that the hottest path of the service costs no promise.
   */
  freshHit(txHash: Hash): VerifiedResult | undefined {
    const result = this.#options.cache.peek(txHash)
    if (result?.outcome !== 'verified' || result.freshUntil <= this.#now()) return undefined
    this.#options.counters.hits.inc()
    return result
  }

  /**
   * Forgets what was answered for these transactions (their stored ciphertexts were erased): here and in a shared
   * cache at once. A failure is logged, not thrown: the erasure itself is done, and every copy expires with its TTL.
   */
  async forget(txHashes: readonly Hash[]): Promise<void> {
    for (const txHash of txHashes) {
      this.#markForgotten(txHash)
      try {
        await this.#options.cache.delete(txHash)
      } catch (error) {
        this.#options.log.warn({ err: error }, 'verify cache entry not forgotten; it expires with its TTL')
      }
    }
  }

  #markForgotten(txHash: Hash): void {
    this.#forgottenIn.delete(txHash)
    this.#forgottenIn.set(txHash, ++this.#generation)
    if (this.#forgottenIn.size > FORGOTTEN_REMEMBERED) this.#forgottenIn.delete(this.#forgottenIn.keys().next().value!)
  }

  /** These transactions' ciphertexts were erased: forgotten here and in Redis, and announced to every instance. */
  async erased(txHashes: readonly Hash[]): Promise<void> {
    await this.forget(txHashes)
    for (const txHash of txHashes) await this.#options.announceErased?.(txHash)
  }

  #forgottenSince(txHash: Hash, generation: number): boolean {
    return (this.#forgottenIn.get(txHash) ?? 0) > generation
  }

  /**
   * The verified answer for `txHash` (lower-case hex); one whose `freshUntil` has passed is a fallback served while
   * the chain is down. Rejects with AnchorNotFoundError or ChainTooDeepError (remembered for a few seconds), or with
   * ChainUnavailableError when there is nothing to serve.
   */
  /** The successors past the first `offset` relayed, checked on chain: what `moreSuccessors` counts, a page at a time. */
  successorPage(txHash: Hash, offset: number): Promise<SuccessorPage> {
    return successorPage(this.#options.walk, txHash, offset)
  }

  async verify(txHash: Hash): Promise<VerifiedResult> {
    // Before the cache is read: a stale copy read now must not be served once its transaction is forgotten.
    const generation = this.#generation
    let result: CachedResult | undefined
    try {
      result = await this.#options.cache.get(txHash)
    } catch (error) {
      // A cache outage costs speed, not answers.
      this.#options.log.warn({ err: error }, 'verify cache read failed')
    }
    if (result !== undefined && result.freshUntil > this.#now()) {
      this.#options.counters.hits.inc()
    } else {
      this.#options.counters.misses.inc()
      const previous = result
      result = await this.#flights.run(txHash, () => this.#refresh(txHash, previous, generation))
    }
    if (result.outcome === 'verified') return result
    throw verifyErrorOf(result.outcome, result.detail, result.freshUntil)
  }

  async #refresh(txHash: Hash, previous: CachedResult | undefined, generation: number): Promise<CachedResult> {
    const { cacheTtlSeconds, notFoundTtlSeconds, staleIfErrorSeconds } = this.#options
    let result: CachedResult
    let retainSeconds: number
    this.#options.counters.walks.inc()
    try {
      const verified = await walkChain(this.#options.walk, txHash)
      const body = serializeVerified(txHash, verified)
      const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
      result = { outcome: 'verified', body, etag, freshUntil: this.#freshUntil(cacheTtlSeconds) }
      retainSeconds = cacheTtlSeconds + staleIfErrorSeconds
    } catch (error) {
      if (error instanceof VerifyError) {
        result = { outcome: error.code, detail: error.message, freshUntil: this.#freshUntil(notFoundTtlSeconds) }
        retainSeconds = notFoundTtlSeconds
      } else if (
        error instanceof ChainUnavailableError &&
        previous?.outcome === 'verified' &&
        !this.#forgottenSince(txHash, generation)
      ) {
        // A verified chain stays verified: serving the last good answer beats failing while the RPC is down.
        this.#options.counters.staleServed.inc()
        return previous
      } else {
        throw error
      }
    }
    // A forget while this walk ran: what it read may hold what was erased since; answered once, never kept.
    if (retainSeconds > 0 && result.freshUntil > this.#now() && !this.#forgottenSince(txHash, generation)) {
      await this.#options.cache.set(txHash, result, retainSeconds * 1000).catch((error: unknown) => {
        this.#options.log.warn({ err: error }, 'verify cache write failed')
      })
    }
    return result
  }

  #freshUntil(ttlSeconds: number): number {
    return this.#now() + ttlSeconds * 1000
  }
}

/** The 200 body, keys in the documented order. */
function serializeVerified(txHash: Hash, verified: VerifiedChain): string {
  const { anchor } = verified
  return JSON.stringify({
    txHash,
    compositeHash: anchor.compositeHash,
    signer: anchor.signer,
    timestamp: anchor.timestamp,
    previousTxHash: anchor.previousTxHash,
    chain: verified.chain,
    encryptedPayload: verified.encryptedPayload,
    payloadErased: verified.payloadErased,
    successors: verified.successors,
    moreSuccessors: verified.moreSuccessors,
    attestation: anchor.attestation,
  })
}
