// GET /api/verify/:txHash: public, trustless verification of an anchor and its whole signature chain.
import { LOWER_HEX_HASH, TRUST_ANCHORS } from '@docanchor/client'
import type { FastifyReply, FastifySchemaCompiler } from 'fastify'
import { validatorCompiler } from 'fastify-type-provider-zod'
import type { Hash } from 'viem'
import { z } from 'zod'
import { VerifyError } from '../../verify/errors.ts'
import type { VerifiedResult } from '../../verify/result-cache.ts'
import { parseTxHashParam } from '../../verify/tx-hash-param.ts'
import type { AppInstance } from '../app-types.ts'
import { publicAnswerHeaders } from '../cors.ts'
import { domainProblem } from '../domain-problems.ts'
import { etagMatches } from '../etag.ts'
import { ProblemSchema } from '../problem.ts'

/** Where public verifications live: their answers, and their preflights, are readable by every origin. */
export const VERIFY_PATH_PREFIX = '/api/verify/'

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
/** How often an instance adds its per-IP counts to Redis and learns the fleet's (batched-redis-store.ts). */
const PER_IP_SYNC_MS = 100
const HEX_HASH = z.string().regex(LOWER_HEX_HASH)

const ParamsSchema = z.object({
  txHash: z
    .string()
    .describe('`0x` + 64 hex characters (any case), or the 43-character base64url form of QR URLs')
    .transform((value, ctx) => {
      const txHash = parseTxHashParam(value)
      if (txHash === undefined) {
        ctx.addIssue({
          code: 'custom',
          message: 'must be 0x followed by 64 hex characters, or 43 base64url characters',
        })
        return z.NEVER
      }
      return txHash
    }),
})

/**
 * The app's zod validator behind a shortcut for the hash every QR code and link carries: a well-formed one gives the
 * value the schema's transform would, without a zod parse on the hot path; anything else goes through zod, which
 * words the errors.
 */
const txHashParamsValidator: FastifySchemaCompiler<unknown> = (route) => {
  // Fastify hands a compiler one part of the route's schema (here the params' zod object), not the route schema its
  // types name.
  const validate = validatorCompiler(route as Parameters<typeof validatorCompiler>[0])
  return (data) => {
    const txHash = parseTxHashParam((data as { txHash: string }).txHash)
    return txHash === undefined ? validate(data) : { value: { txHash } }
  }
}

const AttestationSchema = z
  .object({
    trust: z.enum(TRUST_ANCHORS).describe('How the relaying account was signed in'),
    verified: z.boolean(),
    identityCommitment: HEX_HASH.describe('SHA-256(UTF-8(lower-case(account e-mail)) ‖ the payload’s 32 salt bytes)'),
  })
  .nullable()
  .describe(
    'What the service attests about the account that relayed the anchor; null when the relay sent no salt or the ' +
      'service does not know the anchor. Name, company and position are never attested.',
  )

const ChainEntrySchema = z.object({
  txHash: HEX_HASH,
  compositeHash: HEX_HASH,
  signer: z.string().regex(/^0x[0-9a-f]{40}$/),
  timestamp: z.number().int(),
  previousTxHash: HEX_HASH,
  attestation: AttestationSchema,
})

const VerifyResponseSchema = z.object({
  txHash: HEX_HASH,
  compositeHash: HEX_HASH,
  signer: z.string(),
  timestamp: z.number().int(),
  previousTxHash: HEX_HASH,
  chain: z.array(ChainEntrySchema).describe('The document’s first signature to the requested one, inclusive'),
  encryptedPayload: z
    .string()
    .nullable()
    .describe('Stored ciphertext, byte for byte; null when the service holds none'),
  payloadErased: z
    .boolean()
    .describe(
      'The ciphertext was erased at the signer’s request (their account was deleted); the chain still holds the anchor',
    ),
  successors: z
    .array(ChainEntrySchema)
    .describe('Confirmed anchors naming this one as their previous: the first VERIFY_MAX_SUCCESSORS relayed'),
  moreSuccessors: z
    .number()
    .int()
    .describe('Further anchors naming this one, not listed: GET …/successors?offset=VERIFY_MAX_SUCCESSORS lists them'),
  attestation: AttestationSchema,
})

const SuccessorPageSchema = z.object({
  successors: z.array(ChainEntrySchema).describe('Confirmed on chain, in chain order'),
  nextOffset: z.number().int().nullable().describe('The offset of the next page; null after the last'),
})

const SuccessorQuerySchema = z.strictObject({
  offset: z.coerce.number().int().min(0).max(1_000_000).describe('Successors to skip, in the order relayed'),
})

export async function verifyRoutes(app: AppInstance): Promise<void> {
  const { config } = app.deps
  const settings = config.verify
  const service = app.verify
  const cacheControl = cacheControlUntil(settings.cacheTtlSeconds)
  // A client may keep a failure as long as the service still remembers it, and no longer (one it does not: not at all).
  const failureCacheControl = cacheControlUntil(settings.notFoundTtlSeconds)
  const failureHeaders = (error: VerifyError) => ({ 'cache-control': failureCacheControl(error.freshUntil ?? 0) })

  // Keyed under the verify prefix, like the cache, so deployments sharing one Redis count apart. With Redis, counted in
  // memory and synced in batches: a cached answer then waits on no Redis round trip.
  const limitPerIp = app.limiter({
    name: `${settings.redisKeyPrefix}ip`,
    max: config.limits.verifyPerIpPerMinute,
    timeWindowMs: 60_000,
    what: 'verification requests',
    syncIntervalMs: PER_IP_SYNC_MS,
  })

  app.get(
    `${VERIFY_PATH_PREFIX}:txHash`,
    {
      // Public answers first, so that a refusal of the limit is readable by any page too.
      onRequest: [publicAnswerHeaders, limitPerIp.onRequest],
      validatorCompiler: txHashParamsValidator,
      schema: {
        tags: ['verify'],
        summary: 'Verify an anchor and its signature chain against the blockchain',
        params: ParamsSchema,
        // 200 is sent as a pre-serialized string, which Fastify passes through without the serializer.
        response: {
          200: VerifyResponseSchema,
          304: z.null().describe('Not modified: the If-None-Match ETag is current'),
          400: ProblemSchema,
          404: ProblemSchema,
          422: ProblemSchema.describe('CHAIN_TOO_DEEP: the chain is longer than the configured walk limit'),
          429: ProblemSchema,
          502: ProblemSchema,
        },
      },
    },
    // Not async: a fresh hit held in this process is answered at once, without a promise; anything else waits for
    // the service.
    (request, reply) => {
      const hit = service.freshHit(request.params.txHash)
      if (hit === undefined) return verifyAndSend(request.params.txHash, request.headers['if-none-match'], reply)
      sendVerified(reply as unknown as FastifyReply, hit, cacheControl, request.headers['if-none-match'])
      return undefined
    },
  )

  app.get(
    `${VERIFY_PATH_PREFIX}:txHash/successors`,
    {
      onRequest: [publicAnswerHeaders, limitPerIp.onRequest],
      schema: {
        tags: ['verify'],
        summary: 'The anchors naming this one as their previous, past the first ones a verification lists',
        params: ParamsSchema,
        querystring: SuccessorQuerySchema,
        response: { 200: SuccessorPageSchema, 400: ProblemSchema, 429: ProblemSchema, 502: ProblemSchema },
      },
    },
    async (request, reply) => {
      try {
        const page = await service.successorPage(request.params.txHash, request.query.offset)
        reply.header('cache-control', cacheControl(Date.now() + settings.cacheTtlSeconds * 1000))
        return page
      } catch (error) {
        throw domainProblem(error, {})?.problem ?? error
      }
    },
  )

  async function verifyAndSend(txHash: Hash, ifNoneMatch: string | undefined, reply: FastifyReply): Promise<void> {
    let result: VerifiedResult
    try {
      result = await service.verify(txHash)
    } catch (error) {
      throw domainProblem(error, error instanceof VerifyError ? failureHeaders(error) : {})?.problem ?? error
    }
    sendVerified(reply, result, cacheControl, ifNoneMatch)
  }
}

/**
 * `Cache-Control` for a result fresh until a time: `max-age` is the seconds of freshness the service has left for it
 * (rounded to the nearest second), not its whole lifetime, so that a cache in front (HAProxy's, a browser's) keeps a
 * result at most half a second past the moment the service itself would walk the chain again: a result taken off the
 * chain by a reorg is gone from every cache within one lifetime of its walk. HAProxy ignores an `Age` header, so the
 * age has to be in `max-age` itself. An expired result (served while the chain is down) says 0. The strings are made
 * once.
 */
function cacheControlUntil(ttlSeconds: number): (freshUntil: number) => string {
  const values = Array.from({ length: ttlSeconds + 1 }, (_, seconds) => `public, max-age=${seconds}`)
  return (freshUntil) => {
    const seconds = Math.round((freshUntil - Date.now()) / 1000)
    return values[Math.min(ttlSeconds, Math.max(0, seconds))]!
  }
}

/** The stored answer, or 304 when the client's ETag is current. */
function sendVerified(
  reply: FastifyReply,
  result: VerifiedResult,
  cacheControl: (freshUntil: number) => string,
  ifNoneMatch: string | undefined,
): void {
  reply.header('cache-control', cacheControl(result.freshUntil)).header('etag', result.etag)
  if (etagMatches(ifNoneMatch, result.etag)) reply.code(304).send()
  // The stored string goes out as is: Fastify passes a string with a JSON content type through unserialized.
  else reply.header('content-type', JSON_CONTENT_TYPE).send(result.body)
}
