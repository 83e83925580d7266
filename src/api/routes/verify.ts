// GET /api/verify/:txHash: public, trustless verification of an anchor and its whole signature chain.
import { TRUST_ANCHORS } from '@docanchor/client'
import rateLimit from '@fastify/rate-limit'
import type { FastifyReply } from 'fastify'
import { Counter } from 'prom-client'
import { z } from 'zod'
import { ChainUnavailableError } from '../../chain/chain-errors.ts'
import { AnchorReader } from '../../verify/anchor-reader.ts'
import { RedisResultCache } from '../../verify/redis-result-cache.ts'
import { LruResultCache, type ResultCache } from '../../verify/result-cache.ts'
import { parseTxHashParam } from '../../verify/tx-hash-param.ts'
import { VerifyService } from '../../verify/verify-service.ts'
import type { AppInstance } from '../app-types.ts'
import { PROBLEM_CONTENT_TYPE, ProblemError, ProblemSchema } from '../problem.ts'

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8'
const HEX_HASH = z.string().regex(/^0x[0-9a-f]{64}$/)

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
  successors: z.array(ChainEntrySchema).describe('Confirmed anchors naming this one as their previous'),
  attestation: AttestationSchema,
})

export async function verifyRoutes(app: AppInstance): Promise<void> {
  const { config, chain, database, metrics, redis } = app.deps
  const settings = config.verify

  // Keyed by deployment as well, so chains and contracts sharing one Redis never mix their results; and by the answer's
  // shape (`a2`: with attestations), so answers cached by an older version are never served as this one's.
  const deployment = `${settings.redisKeyPrefix}a2:${chain.chainId}:${chain.contractAddress.toLowerCase()}:`
  const cache: ResultCache = redis
    ? new RedisResultCache(redis, deployment)
    : new LruResultCache(settings.cacheMaxEntries)

  const counter = (name: string, help: string) => new Counter({ name, help, registers: [metrics.registry] })
  const service = new VerifyService({
    walk: {
      db: database.db,
      reader: new AnchorReader({
        client: chain.client,
        contract: chain.contractAddress,
        finalityDepth: settings.finalityDepth,
        finalCacheMaxEntries: settings.receiptCacheMaxEntries,
      }),
      maxDepth: settings.maxDepth,
      maxSuccessors: settings.maxSuccessors,
    },
    cache,
    cacheTtlSeconds: settings.cacheTtlSeconds,
    notFoundTtlSeconds: settings.notFoundTtlSeconds,
    staleIfErrorSeconds: settings.staleIfErrorSeconds,
    counters: {
      hits: counter('verify_cache_hits_total', 'Verify requests answered from the result cache'),
      misses: counter('verify_cache_misses_total', 'Verify requests that needed the chain'),
      walks: counter('verify_walks_total', 'Chain walks run; concurrent misses of one hash share a walk'),
      staleServed: counter('verify_stale_served_total', 'Expired verify results served while the chain was down'),
    },
    log: app.log,
  })

  await app.register(rateLimit, {
    global: false,
    ...(redis && { redis, nameSpace: `${settings.redisKeyPrefix}rate:` }),
    // Verification must keep working when Redis does not.
    skipOnError: true,
    addHeadersOnExceeding: { 'x-ratelimit-limit': false, 'x-ratelimit-remaining': false, 'x-ratelimit-reset': false },
    addHeaders: {
      'x-ratelimit-limit': true,
      'x-ratelimit-remaining': true,
      'x-ratelimit-reset': true,
      'retry-after': true,
    },
    errorResponseBuilder: (_request, context) =>
      new ProblemError(429, 'RATE_LIMITED', `Too many verification requests; retry in ${context.after}`),
  })

  const freshCacheControl = `public, max-age=${settings.cacheTtlSeconds}`
  const notFoundCacheControl = `public, max-age=${settings.notFoundTtlSeconds}`

  app.get(
    '/api/verify/:txHash',
    {
      config: { rateLimit: { max: config.limits.verifyPerIpPerMinute, timeWindow: 60_000 } },
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
    async (request, reply) => {
      let result: Awaited<ReturnType<VerifyService['verify']>>
      try {
        result = await service.verify(request.params.txHash)
      } catch (error) {
        if (error instanceof ChainUnavailableError) {
          throw new ProblemError(502, 'CHAIN_UNAVAILABLE', 'The blockchain could not be reached; try again later')
        }
        throw error
      }
      // The stored string goes out as is: Fastify passes a string with a JSON content type through unserialized.
      const raw = reply as unknown as FastifyReply
      if (result.status !== 200) {
        return raw
          .code(result.status)
          .header('content-type', PROBLEM_CONTENT_TYPE)
          .header('cache-control', notFoundCacheControl)
          .send(result.body)
      }
      raw
        .header('cache-control', result.freshUntil > Date.now() ? freshCacheControl : 'public, max-age=0')
        .header('etag', result.etag)
      if (etagMatches(request.headers['if-none-match'], result.etag)) return raw.code(304).send()
      return raw.header('content-type', JSON_CONTENT_TYPE).send(result.body)
    },
  )
}

/** If-None-Match holds `*` or a list of tags, weak ones compared by their opaque part (RFC 9110 §13.1.2). */
function etagMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false
  if (header === etag) return true
  return header.split(',').some((tag) => {
    const trimmed = tag.trim()
    return trimmed === '*' || trimmed === etag || trimmed === `W/${etag}`
  })
}
