// Verification: its caches, how far it walks a chain, and when a receipt counts as final.
import { z } from 'zod'
import { type EnvValues, integer } from './env-fields.ts'

export const verifyEnv = {
  /** 0 turns the verify result cache off (every request walks the chain). */
  VERIFY_CACHE_TTL_SECONDS: integer(60, 0),
  VERIFY_NOT_FOUND_TTL_SECONDS: integer(5, 0),
  /** How long an expired verify result may still be served while the chain is unreachable. */
  VERIFY_STALE_IF_ERROR_SECONDS: integer(3600, 0),
  VERIFY_MAX_DEPTH: integer(256, 1),
  VERIFY_MAX_SUCCESSORS: integer(100, 0),
  /** Blocks after which a receipt is taken as final and kept in memory for good. */
  VERIFY_FINALITY_DEPTH: integer(64, 0),
  VERIFY_CACHE_MAX_ENTRIES: integer(10_000, 1),
  VERIFY_RECEIPT_CACHE_MAX_ENTRIES: integer(50_000, 1),
  /** Transaction hashes the in-memory index of verified chains' links holds (a link one, a listed successor one). */
  VERIFY_LINK_CACHE_MAX_HASHES: integer(100_000, 1),
  VERIFY_REDIS_KEY_PREFIX: z.string().default('anchor:verify:'),
}

export function verifySettings(e: EnvValues<typeof verifyEnv>) {
  return {
    cacheTtlSeconds: e.VERIFY_CACHE_TTL_SECONDS,
    notFoundTtlSeconds: e.VERIFY_NOT_FOUND_TTL_SECONDS,
    staleIfErrorSeconds: e.VERIFY_STALE_IF_ERROR_SECONDS,
    maxDepth: e.VERIFY_MAX_DEPTH,
    maxSuccessors: e.VERIFY_MAX_SUCCESSORS,
    finalityDepth: e.VERIFY_FINALITY_DEPTH,
    cacheMaxEntries: e.VERIFY_CACHE_MAX_ENTRIES,
    receiptCacheMaxEntries: e.VERIFY_RECEIPT_CACHE_MAX_ENTRIES,
    linkCacheMaxHashes: e.VERIFY_LINK_CACHE_MAX_HASHES,
    /** Prefix of every Redis key the verify cache and its rate limit write. */
    redisKeyPrefix: e.VERIFY_REDIS_KEY_PREFIX,
  }
}
