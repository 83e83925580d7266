// POST /api/relay and GET /api/anchors/:compositeHash; owns the relayer and its monitor for the app's lifetime.
import rateLimit from '@fastify/rate-limit'
import type { FastifyRequest } from 'fastify'
import fp from 'fastify-plugin'
import { z } from 'zod'
import { fromBase64Url } from '../../formats/base64url.ts'
import {
  AnchorConflictError,
  ChainUnavailableError,
  PreviousNotFoundError,
  QuotaExceededError,
  UserGoneError,
} from '../../relayer/errors.ts'
import { RelayMonitor } from '../../relayer/monitor.ts'
import type { AnchorRow } from '../../relayer/outbox.ts'
import { createRelayMetrics, type RelayMetrics } from '../../relayer/relay-metrics.ts'
import { Relayer, type RelayOutcomeLabel } from '../../relayer/relayer.ts'
import type { AppInstance } from '../app.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

/** 12-byte IV + 16-byte tag + at least one byte of ciphertext. */
const MIN_PAYLOAD_BYTES = 29
/** The QR byte budget of this deployment. */
const MAX_PAYLOAD_CHARS = 2048
const MINUTE_MS = 60_000

const HashSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x followed by 64 hex digits')
  .transform((value) => value.toLowerCase() as `0x${string}`)

const PayloadSchema = z
  .string()
  .min(1)
  .max(MAX_PAYLOAD_CHARS)
  .superRefine((value, ctx) => {
    let bytes: Uint8Array
    try {
      bytes = fromBase64Url(value, 'encryptedPayload')
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message })
      return
    }
    if (bytes.length < MIN_PAYLOAD_BYTES) {
      ctx.addIssue({ code: 'custom', message: `must decode to at least ${MIN_PAYLOAD_BYTES} bytes` })
    }
  })

const RelayBodySchema = z.object({
  compositeHash: HashSchema,
  previousTxHash: HashSchema.describe('0x + 64 zeros for the first signature of a document'),
  encryptedPayload: PayloadSchema.describe('base64url (no padding; padding tolerated) of IV ‖ ciphertext ‖ tag'),
})

const RelayResponseSchema = z.object({
  txHash: z.string(),
  blockNumber: z.number().int().nullable(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['confirmed', 'pending']),
})

const AnchorResponseSchema = z.object({
  txHash: z.string(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['pending', 'confirmed', 'failed']),
  blockNumber: z.number().int().nullable(),
  createdAt: z.string(),
})

/** Not encapsulated, so `app.relayer` reaches tests and tooling; the routes get their own scope below. */
export const relayRoutes = fp(relayPlugin, { name: 'relay' })

async function relayPlugin(app: AppInstance): Promise<void> {
  const { config, database, chain, metrics } = app.deps
  const relayMetrics = createRelayMetrics(metrics.registry)
  const relayer = new Relayer({
    db: database.db,
    chain,
    settings: config.relay,
    plans: config.plans,
    defaultPlan: config.defaultPlan,
    pollingIntervalMs: config.chain.pollingIntervalMs,
    log: app.log.child({ component: 'relayer' }),
    onBalance: (address, ether) => relayMetrics.balance.set({ relayer: address }, ether),
  })
  const monitor = new RelayMonitor(relayer, {
    intervalMs: config.relay.monitorIntervalMs,
    onPending: (count) => relayMetrics.pending.set(count),
  })
  app.decorate('relayer', relayer)
  app.decorate('relayMonitor', monitor)
  app.addHook('onReady', async () => monitor.start())
  app.addHook('preClose', async () => {
    // Requests still waiting for receipts answer 202 at once; the monitor finishes their anchors later.
    relayer.stop()
    await monitor.stop()
  })

  await app.register((scope: AppInstance) => relayEndpoints(scope, relayer, relayMetrics))
}

async function relayEndpoints(app: AppInstance, relayer: Relayer, relayMetrics: RelayMetrics): Promise<void> {
  const { config } = app.deps
  // Shared through Redis when configured, so N instances enforce one limit per user.
  const { redis } = app.deps
  await app.register(rateLimit, { global: false, ...(redis && { redis, nameSpace: 'anchor:relay:rate:' }) })
  const perUser = app.createRateLimit({
    max: config.limits.relayPerUserPerMinute,
    timeWindow: MINUTE_MS,
    keyGenerator: (request) => `relay:${request.user.id}`,
  })
  const limitPerUser = async (request: FastifyRequest) => {
    const result = await perUser(request)
    if (!result.isAllowed && result.isExceeded) {
      throw new ProblemError(429, 'RATE_LIMITED', 'Too many relay requests; try again later', {
        headers: { 'retry-after': String(Math.max(1, result.ttlInSeconds)) },
      })
    }
  }

  app.post(
    '/api/relay',
    {
      preHandler: [app.authenticate, limitPerUser],
      schema: {
        tags: ['relay'],
        summary: 'Anchor a composite hash on chain',
        security: [{ bearerAuth: [] }],
        body: RelayBodySchema,
        response: {
          200: RelayResponseSchema.describe('The same request again: the confirmed anchor'),
          201: RelayResponseSchema.describe('Mined'),
          202: RelayResponseSchema.describe(
            'Signed and persisted, not mined within the wait window; txHash provisional',
          ),
          400: ProblemSchema,
          401: ProblemSchema,
          409: ProblemSchema.describe('ANCHOR_CONFLICT'),
          413: ProblemSchema,
          422: ProblemSchema.describe('PREVIOUS_NOT_FOUND'),
          429: ProblemSchema.describe('RATE_LIMITED, or QUOTA_EXCEEDED with limit, used, resetsAt'),
          502: ProblemSchema.describe('CHAIN_UNAVAILABLE: nothing was kept'),
        },
      },
    },
    async (request, reply) => {
      let outcome: RelayOutcomeLabel = 'chain_unavailable'
      try {
        const { anchor, created } = await relayer.relay({ userId: request.user.id, ...request.body })
        if (anchor.status === 'failed') {
          throw new ChainUnavailableError('The anchor transaction failed on chain')
        }
        const confirmed = anchor.status === 'confirmed'
        outcome = !created ? 'duplicate' : confirmed ? 'confirmed' : 'pending'
        reply.code(confirmed ? (created ? 201 : 200) : 202)
        return relayView(anchor)
      } catch (error) {
        outcome = outcomeOf(error)
        if (error instanceof ChainUnavailableError) {
          request.log.warn({ reason: reasonOf(error.cause) }, 'relay answered 502 CHAIN_UNAVAILABLE')
        }
        throw toProblem(error)
      } finally {
        relayMetrics.count(outcome)
      }
    },
  )

  app.get(
    '/api/anchors/:compositeHash',
    {
      preHandler: app.authenticate,
      schema: {
        tags: ['relay'],
        summary: "One of the caller's own anchors",
        security: [{ bearerAuth: [] }],
        params: z.object({ compositeHash: HashSchema }),
        response: { 200: AnchorResponseSchema, 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request) => {
      const anchor = await relayer.anchorOf(request.user.id, request.params.compositeHash)
      if (!anchor) throw new ProblemError(404, 'ANCHOR_NOT_FOUND', 'You have no anchor with this composite hash')
      return {
        txHash: anchor.txHash,
        compositeHash: anchor.compositeHash,
        previousTxHash: anchor.previousTxHash,
        status: anchor.status,
        blockNumber: anchor.blockNumber,
        createdAt: anchor.createdAt.toISOString(),
      }
    },
  )
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Exposed for tests and operations tooling: the relay core and its background monitor. */
    relayer: Relayer
    relayMonitor: RelayMonitor
  }
}

function relayView(anchor: AnchorRow): z.infer<typeof RelayResponseSchema> {
  return {
    txHash: anchor.txHash,
    blockNumber: anchor.status === 'confirmed' ? anchor.blockNumber : null,
    compositeHash: anchor.compositeHash,
    previousTxHash: anchor.previousTxHash,
    status: anchor.status === 'confirmed' ? 'confirmed' : 'pending',
  }
}

function outcomeOf(error: unknown): RelayOutcomeLabel {
  if (error instanceof QuotaExceededError) return 'quota_exceeded'
  if (error instanceof AnchorConflictError) return 'conflict'
  if (error instanceof PreviousNotFoundError) return 'previous_not_found'
  if (error instanceof UserGoneError) return 'user_gone'
  return 'chain_unavailable'
}

function toProblem(error: unknown): unknown {
  if (error instanceof QuotaExceededError) {
    return new ProblemError(429, 'QUOTA_EXCEEDED', error.message, {
      extensions: { limit: error.limit, used: error.used, resetsAt: error.resetsAt.toISOString() },
      headers: { 'retry-after': String(Math.max(1, Math.ceil((error.resetsAt.getTime() - Date.now()) / 1000))) },
    })
  }
  if (error instanceof AnchorConflictError) return new ProblemError(409, 'ANCHOR_CONFLICT', error.message)
  if (error instanceof PreviousNotFoundError) return new ProblemError(422, 'PREVIOUS_NOT_FOUND', error.message)
  if (error instanceof UserGoneError) {
    return new ProblemError(401, 'UNAUTHENTICATED', error.message, { headers: { 'www-authenticate': 'Bearer' } })
  }
  // No cause attached: the node's error text can carry the RPC URL, and with it a provider's API key.
  if (error instanceof ChainUnavailableError) return new ProblemError(502, 'CHAIN_UNAVAILABLE', error.message)
  return error
}

/** Why the node failed, without its URL: viem's short message and the node's own words only. */
function reasonOf(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined
  const { shortMessage, details } = cause as Error & { shortMessage?: string; details?: string }
  return [cause.name, shortMessage ?? cause.message.split('\n')[0], details].filter(Boolean).join(': ')
}
