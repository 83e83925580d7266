// The app's own types: what buildApp (app.ts) decorates the instance with, in a module of its own so routes and
// plugins can name them without importing app.ts, which imports them.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyInstance, RawServerDefault } from 'fastify'
import type { ZodTypeProvider } from 'fastify-type-provider-zod'
import type { Redis } from 'ioredis'
import type { JwtSettings } from '../auth/jwt.ts'
import type { SessionChecker } from '../auth/sessions.ts'
import type { ChainContext } from '../chain/chain-context.ts'
import type { Config } from '../config/load-config.ts'
import type { DatabaseHandle } from '../db/database.ts'
import type { createAuthenticate } from './authenticate.ts'
import type { Metrics } from './metrics.ts'

export interface Lifecycle {
  /** Set when shutdown begins: new requests get 503 while in-flight ones finish. */
  shuttingDown: boolean
}

export type AppInstance = FastifyInstance<
  RawServerDefault,
  IncomingMessage,
  ServerResponse,
  FastifyBaseLogger,
  ZodTypeProvider
>

export interface AppServices {
  config: Config
  database: DatabaseHandle
  chain: ChainContext
  metrics: Metrics
  jwt: JwtSettings
  sessions: SessionChecker
  /** Present when REDIS_URL is set: shared by the verify cache and the rate limits of every instance. */
  redis: Redis | undefined
}

declare module 'fastify' {
  interface FastifyInstance {
    deps: AppServices
    lifecycle: Lifecycle
    /** The onRequest hook of every protected scope: sets `request.user` or answers 401. */
    authenticate: ReturnType<typeof createAuthenticate>
  }
}
