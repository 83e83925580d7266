// Verification as the route serves it: cache first, one walk per hash at a time, results stored serialized.
import { createHash } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import type { Counter } from 'prom-client'
import type { Hash } from 'viem'
import { type ProblemCode, problemBody } from '../api/problem.ts'
import { ChainUnavailableError } from '../chain/chain-errors.ts'
import { type VerifiedChain, type WalkDependencies, walkChain } from './chain-walker.ts'
import { AnchorNotFoundError, ChainTooDeepError } from './errors.ts'
import type { CachedResult, ResultCache } from './result-cache.ts'
import { SingleFlight } from './single-flight.ts'

export interface VerifyServiceOptions {
  walk: WalkDependencies
  cache: ResultCache
  cacheTtlSeconds: number
  notFoundTtlSeconds: number
  staleIfErrorSeconds: number
  counters: { hits: Counter; misses: Counter; walks: Counter; staleServed: Counter }
  log: FastifyBaseLogger
  now?: () => number
}

export class VerifyService {
  readonly #options: VerifyServiceOptions
  readonly #flights = new SingleFlight<CachedResult>()
  readonly #now: () => number

  constructor(options: VerifyServiceOptions) {
    this.#options = options
    this.#now = options.now ?? Date.now
  }

  /**
   * The response for `txHash` (lower-case hex); one whose `freshUntil` has passed is a fallback served while the
   * chain is down. Rejects with ChainUnavailableError when there is nothing to serve.
   */
  async verify(txHash: Hash): Promise<CachedResult> {
    const cached = await this.#cached(txHash)
    if (cached !== undefined && cached.freshUntil > this.#now()) {
      this.#options.counters.hits.inc()
      return cached
    }
    this.#options.counters.misses.inc()
    return this.#flights.run(txHash, () => this.#refresh(txHash, cached))
  }

  async #refresh(txHash: Hash, previous: CachedResult | undefined): Promise<CachedResult> {
    const { cacheTtlSeconds, notFoundTtlSeconds, staleIfErrorSeconds } = this.#options
    let result: CachedResult
    let retainSeconds: number
    this.#options.counters.walks.inc()
    try {
      const verified = await walkChain(this.#options.walk, txHash)
      result = this.#result(200, serializeVerified(txHash, verified), cacheTtlSeconds)
      retainSeconds = cacheTtlSeconds + staleIfErrorSeconds
    } catch (error) {
      if (error instanceof AnchorNotFoundError) {
        result = this.#problem(404, 'ANCHOR_NOT_FOUND', error.message, notFoundTtlSeconds)
      } else if (error instanceof ChainTooDeepError) {
        result = this.#problem(422, 'CHAIN_TOO_DEEP', error.message, notFoundTtlSeconds)
      } else if (error instanceof ChainUnavailableError && previous?.status === 200) {
        // A verified chain stays verified: serving the last good answer beats failing while the RPC is down.
        this.#options.counters.staleServed.inc()
        return previous
      } else {
        throw error
      }
      retainSeconds = notFoundTtlSeconds
    }
    if (retainSeconds > 0 && result.freshUntil > this.#now()) {
      await this.#options.cache.set(txHash, result, retainSeconds * 1000).catch((error: unknown) => {
        this.#options.log.warn({ err: error }, 'verify cache write failed')
      })
    }
    return result
  }

  async #cached(txHash: Hash): Promise<CachedResult | undefined> {
    try {
      return await this.#options.cache.get(txHash)
    } catch (error) {
      // A cache outage costs speed, not answers.
      this.#options.log.warn({ err: error }, 'verify cache read failed')
      return undefined
    }
  }

  #result(status: number, body: string, ttlSeconds: number): CachedResult {
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`
    return { status, body, etag, freshUntil: this.#now() + ttlSeconds * 1000 }
  }

  #problem(status: number, code: ProblemCode, detail: string, ttlSeconds: number): CachedResult {
    return this.#result(status, JSON.stringify(problemBody(status, code, detail)), ttlSeconds)
  }
}

/** The 200 body, keys in the documented order. */
export function serializeVerified(txHash: Hash, verified: VerifiedChain): string {
  const { anchor } = verified
  return JSON.stringify({
    txHash,
    compositeHash: anchor.compositeHash,
    signer: anchor.signer,
    timestamp: anchor.timestamp,
    previousTxHash: anchor.previousTxHash,
    chain: verified.chain,
    encryptedPayload: verified.encryptedPayload,
    successors: verified.successors,
    attestation: anchor.attestation,
  })
}
