// The verify result cache in Redis, shared by every instance of the service.
import type { Redis } from 'ioredis'
import { VERIFY_ERROR_CODES, type VerifyErrorCode } from './errors.ts'
import type { CachedResult, SharedResultCache } from './result-cache.ts'

const OUTCOMES = new Set<string>(['verified', ...VERIFY_ERROR_CODES])

/**
 * Each result is one Redis string, `outcome \n freshUntil \n etag \n body` (a failure: no ETag, its message as body):
 * the body stays the stored bytes, with no second JSON layer to encode on write and decode on every hit.
 */
export class RedisResultCache implements SharedResultCache {
  readonly #redis: Redis
  readonly #prefix: string

  /** `prefix` should name the deployment (chain and contract): two deployments never share an entry. */
  constructor(redis: Redis, prefix: string) {
    this.#redis = redis
    this.#prefix = prefix
  }

  async get(key: string): Promise<CachedResult | undefined> {
    const stored = await this.#redis.get(this.#prefix + key)
    return stored === null ? undefined : decode(stored)
  }

  async set(key: string, value: CachedResult, retainMs: number): Promise<void> {
    const stored =
      value.outcome === 'verified'
        ? `verified\n${value.freshUntil}\n${value.etag}\n${value.body}`
        : `${value.outcome}\n${value.freshUntil}\n\n${value.detail}`
    await this.#redis.set(this.#prefix + key, stored, 'PX', Math.max(1, Math.ceil(retainMs)))
  }

  async delete(key: string): Promise<void> {
    await this.#redis.del(this.#prefix + key)
  }
}

function decode(stored: string): CachedResult | undefined {
  const first = stored.indexOf('\n')
  const second = stored.indexOf('\n', first + 1)
  const third = stored.indexOf('\n', second + 1)
  if (first < 0 || second < 0 || third < 0) return undefined
  const outcome = stored.slice(0, first)
  const freshUntil = Number(stored.slice(first + 1, second))
  if (!OUTCOMES.has(outcome) || !Number.isFinite(freshUntil)) return undefined
  const body = stored.slice(third + 1)
  if (outcome === 'verified') return { outcome, freshUntil, etag: stored.slice(second + 1, third), body }
  return { outcome: outcome as VerifyErrorCode, freshUntil, detail: body }
}
