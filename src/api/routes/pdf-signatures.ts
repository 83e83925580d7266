// POST /api/pdf-signatures: the CMS of a PDF signature (PAdES B-T) for one of the caller's confirmed anchors, over
// the digest of the PDF's byte range, which the client computed; the service never sees the document. One PDF
// signature per anchor: the same request again gets the same answer, another digest a 409.
import { subjectText } from '@docanchor/client'
import { z } from 'zod'
import { ChainUnavailableError, orChainUnavailable } from '../../chain/chain-errors.ts'
import { blockOrNull } from '../../chain/definite-reads.ts'
import { findPdfSignature, keepPdfSignature, type StoredPdfSignature } from '../../pdf-signing/pdf-signature-store.ts'
import type { PdfSignatureOutcome } from '../../pdf-signing/pdf-signing-metrics.ts'
import { TimestampUnavailableError } from '../../pdf-signing/timestamp-authority.ts'
import { findAnchorByTxHash } from '../../relayer/outbox/anchors.ts'
import { TokenCallError } from '../../relayer/signers/pkcs11-key.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

/**
 * A PDF signature is made right after its anchor is confirmed; verifiers accept its timestamp up to an hour after the
 * anchor's block (TIMESTAMP_WINDOW_SECONDS in @docanchor/client). Later requests are refused, so none is made that
 * would not verify.
 */
const SIGNING_WINDOW_MS = 50 * 60_000
const MINUTE_MS = 60_000

const BodySchema = z.strictObject({
  txHash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x followed by 64 hex digits')
    .transform((value) => value.toLowerCase())
    .describe('A confirmed anchor of the caller'),
  digest: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'expected 64 hex digits')
    .transform((value) => value.toLowerCase())
    .describe("SHA-256 of the PDF's /ByteRange, hex"),
})

const ResponseSchema = z.object({
  txHash: z.string(),
  digest: z.string(),
  cms: z.string().describe("The CMS SignedData (DER, base64) for the PDF's /Contents"),
  signer: z.string().describe("The signing certificate's subject"),
  timestamp: z.object({ time: z.string(), authority: z.string() }),
  blockTime: z.string().describe("The anchor's block time"),
})

export async function pdfSignatureRoutes(app: AppInstance): Promise<void> {
  const { config, database, chain } = app.deps
  const { pdfSigner, pdfSigningMetrics } = app
  const signer = subjectText(pdfSigner.certificates[0]!)
  app.addHook('onRequest', app.authenticate)
  const limitPerUser = app.limiter({
    name: 'pdf-signatures',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'PDF signature requests',
    key: (request) => request.user.id,
  })
  const view = (txHash: string, kept: StoredPdfSignature) => ({
    txHash,
    digest: kept.digest,
    cms: Buffer.from(kept.cms).toString('base64'),
    signer,
    timestamp: { time: kept.timestampTime.toISOString(), authority: kept.timestampAuthority },
    blockTime: kept.blockTime.toISOString(),
  })

  app.post(
    '/api/pdf-signatures',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        tags: ['relay'],
        summary: 'Sign the digest of a PDF byte range for one of your confirmed anchors (PAdES B-T)',
        security: [{ bearerAuth: [] }],
        body: BodySchema,
        response: {
          200: ResponseSchema.describe('The same request again: the signature made the first time'),
          201: ResponseSchema.describe('Signed and timestamped'),
          400: ProblemSchema,
          401: ProblemSchema,
          404: ProblemSchema.describe('ANCHOR_NOT_FOUND: no anchor of yours has this transaction hash'),
          409: ProblemSchema.describe(
            'ANCHOR_NOT_CONFIRMED; PDF_SIGNATURE_CONFLICT (signed for another digest already); PDF_SIGNATURE_TOO_LATE',
          ),
          429: ProblemSchema,
          502: ProblemSchema.describe('CHAIN_UNAVAILABLE: the anchor’s block could not be read'),
          503: ProblemSchema.describe('TIMESTAMP_UNAVAILABLE or SIGNING_UNAVAILABLE: nothing was kept; ask again'),
        },
      },
    },
    async (request, reply) => {
      const { txHash, digest } = request.body
      let outcome: PdfSignatureOutcome = 'signing_unavailable'
      try {
        const anchor = await findAnchorByTxHash(database.db, txHash)
        if (!anchor || anchor.userId !== request.user.id) {
          outcome = 'not_found'
          throw new ProblemError(404, 'ANCHOR_NOT_FOUND', 'No anchor of yours has this transaction hash')
        }
        if (anchor.status !== 'confirmed' || anchor.blockNumber === null) {
          outcome = 'not_confirmed'
          throw new ProblemError(409, 'ANCHOR_NOT_CONFIRMED', 'The anchor is not confirmed yet: ask again once it is')
        }
        const kept = await findPdfSignature(database.db, anchor.id)
        if (kept) {
          if (kept.digest !== digest) {
            outcome = 'conflict'
            throw conflict()
          }
          outcome = 'repeated'
          reply.code(200)
          return view(txHash, kept)
        }
        outcome = 'chain_unavailable'
        const block = await orChainUnavailable(() => blockOrNull(chain.client, BigInt(anchor.blockNumber!)))
        if (!block) throw new ChainUnavailableError('The node does not have the anchor’s block')
        const blockTime = new Date(Number(block.timestamp) * 1000)
        if (Date.now() - blockTime.getTime() > SIGNING_WINDOW_MS) {
          outcome = 'too_late'
          throw new ProblemError(
            409,
            'PDF_SIGNATURE_TOO_LATE',
            `A PDF signature is made within ${SIGNING_WINDOW_MS / MINUTE_MS} minutes of its anchor; this one was mined at ${blockTime.toISOString()}`,
          )
        }
        outcome = 'signing_unavailable'
        const signed = await pdfSigner.sign(Buffer.from(digest, 'hex'))
        const stored = await keepPdfSignature(database.db, anchor.id, {
          digest,
          cms: signed.cms,
          timestampTime: signed.timestampTime,
          timestampAuthority: signed.timestampAuthority,
          blockTime,
        })
        // Another request for the same anchor was stored first.
        if (stored.digest !== digest) {
          outcome = 'conflict'
          throw conflict()
        }
        outcome = 'created'
        reply.code(201)
        return view(txHash, stored)
      } catch (error) {
        if (error instanceof TimestampUnavailableError) {
          outcome = 'timestamp_unavailable'
          request.log.warn({ reason: error.message }, 'no timestamp for a PDF signature')
          throw new ProblemError(503, 'TIMESTAMP_UNAVAILABLE', 'No time-stamping authority answered; try again later')
        }
        if (error instanceof TokenCallError) {
          request.log.error({ reason: error.message }, 'the PDF signing key did not sign')
          throw new ProblemError(503, 'SIGNING_UNAVAILABLE', 'The signing key is unavailable; try again later')
        }
        if (error instanceof ChainUnavailableError) {
          throw new ProblemError(502, 'CHAIN_UNAVAILABLE', 'The anchor’s block could not be read; try again later')
        }
        throw error
      } finally {
        pdfSigningMetrics.outcomes.inc({ outcome })
      }
    },
  )
}

const conflict = () =>
  new ProblemError(409, 'PDF_SIGNATURE_CONFLICT', 'This anchor’s PDF signature was made for another document')
