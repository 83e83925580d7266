// Types for @fastify/rate-limit's own counter stores, which its package ships but does not name in its types: the
// limiter calls them directly, so that a check held in memory completes synchronously.
declare module '@fastify/rate-limit/store/LocalStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'

  const LocalStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    cache: number,
  ) => FastifyRateLimitStore
  export default LocalStore
}

declare module '@fastify/rate-limit/store/RedisStore.js' {
  import type { FastifyRateLimitStore } from '@fastify/rate-limit'
  import type { Redis } from 'ioredis'

  const RedisStore: new (
    continueExceeding: boolean,
    exponentialBackoff: boolean,
    redis: Redis,
    key: string,
  ) => FastifyRateLimitStore
  export default RedisStore
}
