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
import { clientAddress } from '../client-address.ts'
import { domainProblem } from '../domain-problems.ts'
import { etagMatches } from '../etag.ts'
import { routeSeries } from '../metrics.ts'
import { ProblemSchema } from '../problem.ts'
import { verifyEarlyAnswer } from './verify-early-answer.ts'

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
const PATH_PREFIX = '/api/verify/'
const ROUTE = `${PATH_PREFIX}:txHash`
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
  successors: z.array(ChainEntrySchema).describe('Confirmed anchors naming this one as their previous'),
  attestation: AttestationSchema,
})

export async function verifyRoutes(app: AppInstance): Promise<void> {
  const { config } = app.deps
  const settings = config.verify
  const service = app.verify
  const freshCacheControl = `public, max-age=${settings.cacheTtlSeconds}`
  // The service remembers a failure this long; a client may too.
  const failureHeaders = { 'cache-control': `public, max-age=${settings.notFoundTtlSeconds}` }

  // Keyed under the verify prefix, like the cache, so deployments sharing one Redis count apart. With Redis, counted in
  // memory and synced in batches: a cached answer then waits on no Redis round trip.
  const limitPerIp = app.limiter({
    name: `${settings.redisKeyPrefix}ip`,
    max: config.limits.verifyPerIpPerMinute,
    timeWindowMs: 60_000,
    what: 'verification requests',
    syncIntervalMs: PER_IP_SYNC_MS,
  })

  // A fresh hit is answered before Fastify routes the request (verify-early-answer.ts); the route answers the rest.
  // What the route sends for a fresh hit, the early answer must send too: test/api/verify-early-answer.test.ts compares.
  const { countEarly } = limitPerIp
  if (countEarly === undefined) throw new Error('The per-IP verify limit must count requests before they are routed')
  app.earlyAnswers.add(
    verifyEarlyAnswer({
      pathPrefix: PATH_PREFIX,
      service,
      countEarly,
      headers: app.answerHeaders,
      lifecycle: app.lifecycle,
      clientAddress: clientAddress(config.trustProxy),
      seriesOf: routeSeries(app.deps.metrics, ROUTE, ['GET']),
      log: app.log,
      nextRequestId: app.earlyAnswers.nextRequestId,
      freshCacheControl,
      contentType: JSON_CONTENT_TYPE,
    }),
  )

  app.get(
    ROUTE,
    {
      onRequest: limitPerIp.onRequest,
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
      sendVerified(reply as unknown as FastifyReply, hit, freshCacheControl, request.headers['if-none-match'])
      return undefined
    },
  )

  async function verifyAndSend(txHash: Hash, ifNoneMatch: string | undefined, reply: FastifyReply): Promise<void> {
    let result: VerifiedResult
    try {
      result = await service.verify(txHash)
    } catch (error) {
      throw domainProblem(error, error instanceof VerifyError ? failureHeaders : {})?.problem ?? error
    }
    const cacheControl = result.freshUntil > Date.now() ? freshCacheControl : 'public, max-age=0'
    sendVerified(reply, result, cacheControl, ifNoneMatch)
  }
}

/** The stored answer, or 304 when the client's ETag is current. */
function sendVerified(
  reply: FastifyReply,
  result: VerifiedResult,
  cacheControl: string,
  ifNoneMatch: string | undefined,
): void {
  reply.header('cache-control', cacheControl).header('etag', result.etag)
  if (etagMatches(ifNoneMatch, result.etag)) reply.code(304).send()
  // The stored string goes out as is: Fastify passes a string with a JSON content type through unserialized.
  else reply.header('content-type', JSON_CONTENT_TYPE).send(result.body)
}
