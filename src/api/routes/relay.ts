// POST /api/relay and GET /api/anchors/:compositeHash, on the relayer the app's plugin built (plugins/relayer.ts).

import { fromBase64Url, type IdentityAttestation, identityCommitment, QR_CIPHERTEXT_LIMIT } from '@docanchor/client'
import { z } from 'zod'
import { ChainUnavailableError } from '../../chain/chain-errors.ts'
import { type AnchorRow, findOwnAnchor } from '../../relayer/outbox/anchors.ts'
import { relay } from '../../relayer/relay.ts'
import type { RelayOutcomeLabel } from '../../relayer/relay-metrics.ts'
import type { AppInstance } from '../app-types.ts'
import type { AuthenticatedUser } from '../authenticate.ts'
import { domainProblem } from '../domain-problems.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

/** 12-byte IV + 16-byte tag + at least one byte of ciphertext. */
const MIN_PAYLOAD_BYTES = 29
const MINUTE_MS = 60_000

const HashSchema = z
  .string()
  .regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x followed by 64 hex digits')
  .transform((value) => value.toLowerCase() as `0x${string}`)

const PayloadSchema = z
  .string()
  .min(1)
  .max(QR_CIPHERTEXT_LIMIT)
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

const RelayBodySchema = z.strictObject({
  compositeHash: HashSchema,
  previousTxHash: HashSchema.describe('0x + 64 zeros for the first signature of a document'),
  encryptedPayload: PayloadSchema.describe('base64url (no padding; padding tolerated) of IV ‖ ciphertext ‖ tag'),
  salt: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'expected 64 hex digits')
    .optional()
    .describe(
      "The payload's salt: the service then attests the relaying account (identityCommitment, trust, verified) " +
        'and forgets the salt',
    ),
})

const RelayResponseSchema = z.object({
  txHash: z.string(),
  blockNumber: z.number().int().nullable(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['confirmed', 'pending']),
})

/** One of the caller's anchors, as GET /api/anchors/:compositeHash and each entry of GET /api/anchors show it. */
export const AnchorResponseSchema = z.object({
  txHash: z.string(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['pending', 'confirmed', 'failed']),
  blockNumber: z.number().int().nullable(),
  createdAt: z.string(),
})

/** Wires the relayer (src/api/plugins/relayer.ts) to HTTP. */
export async function relayRoutes(app: AppInstance): Promise<void> {
  const { config } = app.deps
  const { relayer, relayMetrics } = app
  // Both routes are protected: the token is checked on request, before the body, params or query are looked at.
  app.addHook('onRequest', app.authenticate)
  // Shared through Redis when configured, so N instances enforce one limit per user. While Redis is down the limit
  // is skipped rather than failing relays: the plan's quota, kept in the database, still bounds what a user spends.
  const limitPerUser = app.limiter({
    name: 'relay',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'relay requests',
    key: (request) => request.user.id,
  })

  app.post(
    '/api/relay',
    {
      preHandler: (request) => limitPerUser(request),
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
          409: ProblemSchema.describe('ANCHOR_CONFLICT, also for a repeat whose salt differs from the first relay’s'),
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
        const { salt, ...body } = request.body
        const attestation = salt === undefined ? null : await attest(request.user, salt)
        const { anchor, created } = await relay(relayer, { userId: request.user.id, ...body, attestation })
        if (anchor.status === 'failed') {
          throw new ChainUnavailableError('The anchor transaction failed on chain')
        }
        const confirmed = anchor.status === 'confirmed'
        outcome = !created ? 'duplicate' : confirmed ? 'confirmed' : 'pending'
        reply.code(confirmed ? (created ? 201 : 200) : 202)
        return relayView(anchor)
      } catch (error) {
        // Anything else (the database gone, say) stays a chain_unavailable outcome and is answered by the handler.
        const known = domainProblem(error)
        outcome = known?.outcome ?? 'chain_unavailable'
        if (error instanceof ChainUnavailableError) {
          request.log.warn({ reason: reasonOf(error.cause) }, 'relay answered 502 CHAIN_UNAVAILABLE')
        }
        throw known?.problem ?? error
      } finally {
        relayMetrics.count(outcome)
      }
    },
  )

  app.get(
    '/api/anchors/:compositeHash',
    {
      schema: {
        tags: ['relay'],
        summary: "One of the caller's own anchors",
        security: [{ bearerAuth: [] }],
        params: z.object({ compositeHash: HashSchema }),
        response: { 200: AnchorResponseSchema, 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema },
      },
    },
    async (request) => {
      const anchor = await findOwnAnchor(relayer.db, request.user.id, request.params.compositeHash)
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

/** What the service attests about the account relaying an anchor: its e-mail (committed to under the salt) and session. */
async function attest(user: AuthenticatedUser, salt: string): Promise<IdentityAttestation> {
  return { trust: user.trust, verified: user.verified, identityCommitment: await identityCommitment(user.email, salt) }
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

/** Why the node failed, without its URL: viem's short message and the node's own words only. */
function reasonOf(cause: unknown): string | undefined {
  if (!(cause instanceof Error)) return undefined
  const { shortMessage, details } = cause as Error & { shortMessage?: string; details?: string }
  return [cause.name, shortMessage ?? cause.message.split('\n')[0], details].filter(Boolean).join(': ')
}
