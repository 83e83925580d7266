// Builds the HTTP application from its dependencies; src/server.ts only listens. Tests call buildApp and inject.

import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import Fastify, { type FastifyBaseLogger, type FastifyServerOptions } from 'fastify'
import {
  jsonSchemaTransform,
  serializerCompiler,
  validatorCompiler,
  type ZodTypeProvider,
} from 'fastify-type-provider-zod'
import type { JwtSettings } from '../auth/jwt.ts'
import { SessionChecker } from '../auth/sessions.ts'
import type { ChainContext } from '../chain/chain-context.ts'
import type { Config } from '../config/load-config.ts'
import type { DatabaseHandle } from '../db/database.ts'
import { loggerOptions } from '../logging.ts'
import { connectRedis } from '../redis-client.ts'
import { SERVICE_VERSION } from '../version.ts'
import type { AppInstance } from './app-types.ts'
import { createAuthenticate } from './authenticate.ts'
import { commonHeaders, setAnswerHeaders } from './common-headers.ts'
import { registerCors, servicePolicy } from './cors.ts'
import { registerErrorHandling, sendProblem } from './error-handler.ts'
import { answerServerEdges, clientErrorHandler, frameworkErrors, requestProblem } from './framework-errors.ts'
import { requestLoggerFactory } from './lazy-child-logger.ts'
import { createMetrics, type Metrics, registerHttpMetrics } from './metrics.ts'
import { countersignNoticesPlugin } from './plugins/countersign-notices.ts'
import { mailerPlugin } from './plugins/mailer.ts'
import { pdfSigningPlugin } from './plugins/pdf-signing.ts'
import { rateLimitPlugin } from './plugins/rate-limit.ts'
import { relayerPlugin } from './plugins/relayer.ts'
import { signInCleanupPlugin } from './plugins/sign-in-cleanup.ts'
import { verifyPlugin } from './plugins/verify.ts'
import { webhooksPlugin } from './plugins/webhooks.ts'
import { ProblemError } from './problem.ts'
import { requestLogController } from './request-log-policy.ts'
import { accountRoutes } from './routes/account.ts'
import { anchorHistoryRoutes } from './routes/anchor-history.ts'
import { authRoutes } from './routes/auth/auth-routes.ts'
import { certificateStatusRoutes } from './routes/certificate-status.ts'
import { eventRoutes } from './routes/events.ts'
import { healthRoutes } from './routes/health.ts'
import { infoRoutes } from './routes/info.ts'
import { libraryRoutes } from './routes/library.ts'
import { pdfSignatureRoutes } from './routes/pdf-signatures.ts'
import { publicRpcRoutes } from './routes/public-rpc.ts'
import { relayRoutes } from './routes/relay.ts'
import { VERIFY_PATH_PREFIX, verifyRoutes } from './routes/verify.ts'
import { webRoutes } from './routes/web.ts'
import { webhookKeyRoutes, webhookRoutes } from './routes/webhooks.ts'

export interface AppDependencies {
  config: Config
  database: DatabaseHandle
  chain: ChainContext
  metrics?: Metrics
  /** A logger to use instead of a new one built from the config (tests pass a silent one). */
  logger?: FastifyBaseLogger
}

type CompilersFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>
/** Fastify types these factories after its default compilers; at run time it takes any compiler, as
 * `setValidatorCompiler` does. */
const ZOD_COMPILERS = {
  buildValidator: () => validatorCompiler,
  buildSerializer: () => serializerCompiler,
} as unknown as CompilersFactory

export async function buildApp(deps: AppDependencies): Promise<AppInstance> {
  const { config } = deps
  const metrics = deps.metrics ?? createMetrics()
  if (config.jwt.secret === undefined) throw new Error('buildApp needs config.jwt.secret (startService provides one)')
  const jwt: JwtSettings = { secret: config.jwt.secret, issuer: config.jwt.issuer, audience: config.jwt.audience }
  const sessions = new SessionChecker(deps.database.db)
  if (deps.database.kind === 'postgres') deps.database.history.onChange(() => sessions.forgetAll())
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: loggerOptions(config.logLevel) }),
    bodyLimit: config.limits.bodyBytes,
    trustProxy: config.trustProxy,
    // Our own hook answers with a problem body instead of Fastify's plain 503.
    return503OnClosing: false,
    requestIdHeader: false,
    logController: requestLogController(config.requestLog),
    childLoggerFactory: requestLoggerFactory(deps.logger?.level ?? config.logLevel, config.requestLog.mode === 'all'),
    frameworkErrors,
    clientErrorHandler,
    // Node's own 400 for a request without Host is a bare one: the app answers it with a problem body instead.
    // A request must arrive whole within REQUEST_TIMEOUT_MS (Node answers 408 and closes); Node looks for late ones
    // every connectionsCheckingInterval, so that interval is a small part of the timeout. Given to Node's server at
    // its creation: Node 20 ignores a requestTimeout set on the server afterwards, which is what Fastify's own does.
    http: {
      requireHostHeader: false,
      requestTimeout: config.limits.requestTimeoutMs,
      connectionsCheckingInterval: Math.max(250, Math.min(5_000, config.limits.requestTimeoutMs / 4)),
    },
    requestTimeout: config.limits.requestTimeoutMs,
    // Zod validates and serializes every schema here. Given as the factories rather than set after construction, so
    // that Fastify never loads its default compilers (Ajv and fast-json-stringify, ~80 ms of a start) to replace them.
    schemaController: { compilersFactory: ZOD_COMPILERS },
  }).withTypeProvider<ZodTypeProvider>()

  // Fastify reads text/plain bodies as strings by default; every route here takes JSON, so anything else is a 415.
  app.removeContentTypeParser('text/plain')
  const redis = config.redis.url === undefined ? undefined : await connectRedis(config.redis.url, app.log)
  if (redis) await sessions.shareRevocations(redis, app.log)
  app.decorate('deps', { config, database: deps.database, chain: deps.chain, metrics, jwt, sessions, redis })
  app.decorate('authenticate', createAuthenticate(jwt, sessions))
  app.decorate('lifecycle', { shuttingDown: false })
  app.addHook('preClose', async () => {
    app.lifecycle.shuttingDown = true
  })
  app.addHook('onClose', async () => {
    sessions.close()
    redis?.disconnect()
  })
  registerErrorHandling(app)
  // Before any route: each route gets its own metrics hook when it is added.
  registerHttpMetrics(app, metrics, config.metrics.token)
  const answerHeaders = commonHeaders(
    config.hstsMaxAgeSeconds,
    registerCors(app, servicePolicy(config.corsOrigins), [VERIFY_PATH_PREFIX]),
  )
  // Hooks on every request take a callback rather than being async: no promise per request and hook. One hook sets
  // every header all answers carry: each hook costs every request a turn of Fastify's hook runner.
  answerServerEdges(app.server, answerHeaders)
  app.addHook('onRequest', (request, reply, done) => {
    setAnswerHeaders(answerHeaders, request, reply)
    const unservable = requestProblem(request)
    if (unservable) {
      sendProblem(reply, unservable)
      return
    }
    if (app.lifecycle.shuttingDown && request.url !== '/healthz') {
      reply.header('connection', 'close')
      sendProblem(reply, new ProblemError(503, 'NOT_READY', 'The service is shutting down'))
      return
    }
    done()
  })
  // A request in flight when shutdown begins keeps its keep-alive connection, which the server's close would then wait
  // on until the keep-alive timeout (72 s): answering it with `Connection: close` lets the socket go with the response.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (app.lifecycle.shuttingDown) reply.header('connection', 'close')
    done(null, payload)
  })
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Document anchoring service',
        version: SERVICE_VERSION,
        description: 'Relays document anchors to the DocumentAnchors contract and verifies them publicly.',
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
    },
    transform: jsonSchemaTransform,
  })
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The UI's own policy, with hashes of its inline scripts; nobody may frame it (clickjacking with a pasted token),
    // and a plain-http development server must still load its assets.
    staticCSP: true,
    transformStaticCSP: (policy) =>
      policy.replace("frame-ancestors 'self'", "frame-ancestors 'none'").replace(' upgrade-insecure-requests;', ''),
  })
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger())

  // Services for the app's lifetime first, decorated on it; then the routes that wire them to HTTP.
  await app.register(rateLimitPlugin)
  await app.register(relayerPlugin)
  await app.register(verifyPlugin)
  await app.register(mailerPlugin)
  await app.register(webhooksPlugin)
  await app.register(countersignNoticesPlugin)
  await app.register(pdfSigningPlugin)
  await app.register(signInCleanupPlugin)
  await app.register(healthRoutes)
  await app.register(infoRoutes)
  await app.register(publicRpcRoutes)
  await app.register(relayRoutes)
  await app.register(anchorHistoryRoutes)
  await app.register(eventRoutes)
  await app.register(webhookRoutes)
  await app.register(webhookKeyRoutes)
  await app.register(accountRoutes)
  await app.register(pdfSignatureRoutes)
  await app.register(certificateStatusRoutes)
  await app.register(authRoutes)
  await app.register(verifyRoutes)
  await app.register(webRoutes)
  await app.register(libraryRoutes)
  return app
}
