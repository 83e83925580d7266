// The service as its signers' certificate authority (issue 37). POST /api/signer-certificates certifies the key of a
// signer's PKCS#10 request under the account's verified e-mail. POST /api/pdf-signatures takes a PDF signature's CMS
// that such a key made for one of the caller's confirmed anchors (its signed attributes name the anchor) and answers
// it with a timestamp token added (PAdES B-T). The service never signs a document or a digest itself. One PDF
// signature per anchor: the same request again gets the same answer, another digest a 409, and a concurrent request
// that will lose costs no time-stamping authority anything. POST /api/document-timestamps timestamps a PDF's
// byte-range digest (PAdES B-LTA's document timestamp): the authority's statement of a time, which names nobody.
import { compositeHashesEqual, subjectText } from '@docanchor/client'
import { z } from 'zod'
import { ChainUnavailableError } from '../../chain/chain-errors.ts'
import { blockOrNull } from '../../chain/definite-reads.ts'
import {
  completePdfSignature,
  releasePdfSignature,
  reservePdfSignature,
  type StoredPdfSignature,
} from '../../pdf-signing/pdf-signature-store.ts'
import type { PdfSignatureOutcome } from '../../pdf-signing/pdf-signing-metrics.ts'
import type { CheckedSignature } from '../../pdf-signing/signer-authority.ts'
import { serialOf } from '../../pdf-signing/signer-certificate.ts'
import {
  certificateBase64,
  recordSignerCertificate,
  signerCertificateStatus,
} from '../../pdf-signing/signer-certificate-store.ts'
import { findAnchorByTxHash } from '../../relayer/outbox/anchors.ts'
import type { AppInstance } from '../app-types.ts'
import { domainProblem } from '../domain-problems.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

/**
 * A PDF signature is made right after its anchor is confirmed; verifiers accept its timestamp up to an hour after the
 * anchor's block (TIMESTAMP_WINDOW_SECONDS in @docanchor/client). Later requests are refused, so none is made that
 * would not verify.
 */
const SIGNING_WINDOW_MS = 50 * 60_000
const MINUTE_MS = 60_000
/** A P-256 request is about 300 bytes; a signer's CMS with its chain a few kilobytes (the PDF reserves 16 KiB). */
const MAX_CSR_BASE64 = 4096
const MAX_CMS_BASE64 = 16_384

const base64 = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'expected base64')
    .transform((value) => new Uint8Array(Buffer.from(value, 'base64')))

const CertificateBodySchema = z.strictObject({
  csr: base64(MAX_CSR_BASE64).describe('A PKCS#10 request (DER, base64) for a P-256 key, signed by that key'),
})

const CertificateResponseSchema = z.object({
  certificate: z.string().describe('The signer certificate (DER, base64)'),
  chain: z.array(z.string()).describe('The issuing CA up to the root (DER, base64)'),
  serialNumber: z.string().describe('Lower-case hex'),
  email: z.string().describe('The account’s verified e-mail, which the certificate names'),
  notAfter: z.string(),
})

const SignatureBodySchema = z.strictObject({
  txHash: z
    .string()
    .regex(/^0x[0-9a-fA-F]{64}$/, 'expected 0x followed by 64 hex digits')
    .transform((value) => value.toLowerCase())
    .describe('A confirmed anchor of the caller'),
  cms: base64(MAX_CMS_BASE64).describe(
    "The PDF signature's CMS SignedData (DER, base64) made with the caller's signer certificate, its signed " +
      'attributes naming this anchor; without a timestamp',
  ),
})

const DocumentTimestampBodySchema = z.strictObject({
  digest: z
    .string()
    .regex(/^[0-9a-fA-F]{64}$/, 'expected 64 hex digits')
    .transform((value) => new Uint8Array(Buffer.from(value, 'hex')))
    .describe("SHA-256 of the PDF's /ByteRange for a document timestamp (/SubFilter /ETSI.RFC3161)"),
})

const DocumentTimestampResponseSchema = z.object({
  token: z.string().describe('The RFC 3161 TimeStampToken (DER, base64), checked against the trusted TSA roots'),
})

const SignatureResponseSchema = z.object({
  txHash: z.string(),
  digest: z.string().describe("SHA-256 of the PDF's /ByteRange, hex: the CMS's messageDigest"),
  cms: z.string().describe("The CMS with its signature timestamp token (DER, base64), for the PDF's /Contents"),
  signer: z.string().describe("The signer certificate's subject"),
  timestamp: z.object({ time: z.string(), authority: z.string() }),
  blockTime: z.string().describe("The anchor's block time"),
})

export async function pdfSignatureRoutes(app: AppInstance): Promise<void> {
  const { config, database, chain } = app.deps
  const { signerAuthority, pdfSigningMetrics } = app
  const chainCertificates = signerAuthority.certificates.map(certificateBase64)
  app.addHook('onRequest', app.authenticate)
  const limitPerUser = app.limiter({
    name: 'pdf-signatures',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'PDF signature and certificate requests',
    key: (request) => request.user.id,
  })

  app.post(
    '/api/signer-certificates',
    {
      preHandler: (request) => limitPerUser(request),
      bodyLimit: 8192,
      schema: {
        tags: ['relay'],
        summary: 'Certify your own signing key under your verified e-mail (a certificate of the service’s CA)',
        security: [{ bearerAuth: [] }],
        body: CertificateBodySchema,
        response: {
          201: CertificateResponseSchema,
          400: ProblemSchema,
          401: ProblemSchema,
          403: ProblemSchema.describe('EMAIL_NOT_VERIFIED: the sign-in did not verify the account’s e-mail'),
          422: ProblemSchema.describe('CSR_INVALID: not a PKCS#10 request for a P-256 key signed by that key'),
          429: ProblemSchema,
          503: ProblemSchema.describe('SIGNING_UNAVAILABLE: the CA key did not sign; ask again'),
        },
      },
    },
    async (request, reply) => {
      const { user } = request
      if (!user.verified) {
        throw new ProblemError(403, 'EMAIL_NOT_VERIFIED', 'Your sign-in did not verify your e-mail address')
      }
      try {
        const certificate = await signerAuthority.issue(request.body.csr, { email: user.email, trust: user.trust })
        await recordSignerCertificate(database.db, user.id, certificate)
        reply.code(201)
        return {
          certificate: certificateBase64(certificate),
          chain: chainCertificates,
          serialNumber: serialOf(certificate),
          email: user.email,
          notAfter: certificate.notAfter.value.toISOString(),
        }
      } catch (error) {
        throw domainProblem(error)?.problem ?? error
      }
    },
  )

  app.post(
    '/api/pdf-signatures',
    {
      preHandler: (request) => limitPerUser(request),
      bodyLimit: 32_768,
      schema: {
        tags: ['relay'],
        summary: 'Timestamp the PDF signature you made for one of your confirmed anchors (PAdES B-T)',
        security: [{ bearerAuth: [] }],
        body: SignatureBodySchema,
        response: {
          200: SignatureResponseSchema.describe('The same request again: the signature timestamped the first time'),
          201: SignatureResponseSchema.describe('Timestamped'),
          400: ProblemSchema,
          401: ProblemSchema,
          403: ProblemSchema.describe('CERTIFICATE_NOT_YOURS or CERTIFICATE_REVOKED'),
          404: ProblemSchema.describe('ANCHOR_NOT_FOUND: no anchor of yours has this transaction hash'),
          409: ProblemSchema.describe(
            'ANCHOR_NOT_CONFIRMED; PDF_SIGNATURE_CONFLICT (signed for another digest already); ' +
              'PDF_SIGNATURE_IN_PROGRESS (another request is timestamping it: ask again); PDF_SIGNATURE_TOO_LATE',
          ),
          422: ProblemSchema.describe('PDF_SIGNATURE_REFUSED: the CMS is not a signature of yours naming this anchor'),
          429: ProblemSchema,
          502: ProblemSchema.describe('CHAIN_UNAVAILABLE: the anchor’s block could not be read'),
          503: ProblemSchema.describe('TIMESTAMP_UNAVAILABLE: nothing was kept; ask again'),
        },
      },
    },
    async (request, reply) => {
      const { txHash, cms } = request.body
      let outcome: PdfSignatureOutcome = 'refused'
      let reserved: { anchorId: string; digest: string } | undefined
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
        const checked = await signerAuthority.check(cms)
        await ensureOwnCertificate(checked, request.user.id)
        const named = checked.anchor
        if (
          named.chainId !== chain.chainId ||
          named.contract !== chain.contractAddress.toLowerCase() ||
          named.txHash !== txHash ||
          !compositeHashesEqual(named.compositeHash, anchor.compositeHash)
        ) {
          throw refused('its signed attributes name another anchor (chain, contract, transaction or composite hash)')
        }
        outcome = 'chain_unavailable'
        const block = await blockOrNull(chain.client, BigInt(anchor.blockNumber!)).catch(() => null)
        if (!block) throw new ChainUnavailableError('The anchor’s block could not be read; try again later')
        const blockTime = new Date(Number(block.timestamp) * 1000)
        if (Date.now() - blockTime.getTime() > SIGNING_WINDOW_MS) {
          outcome = 'too_late'
          throw new ProblemError(
            409,
            'PDF_SIGNATURE_TOO_LATE',
            `A PDF signature is made within ${SIGNING_WINDOW_MS / MINUTE_MS} minutes of its anchor; this one was mined at ${blockTime.toISOString()}`,
          )
        }
        const slot = await reservePdfSignature(database.db, anchor.id, checked.digest, blockTime)
        if (slot.state === 'taken') {
          if (slot.digest !== checked.digest) {
            outcome = 'conflict'
            throw conflict()
          }
          if (!slot.made) {
            outcome = 'in_progress'
            throw new ProblemError(
              409,
              'PDF_SIGNATURE_IN_PROGRESS',
              'Another request is timestamping this anchor’s signature; ask again in a moment',
            )
          }
          outcome = 'repeated'
          reply.code(200)
          return view(txHash, slot.made, checked)
        }
        reserved = { anchorId: anchor.id, digest: checked.digest }
        outcome = 'timestamp_unavailable'
        const timestamped = await signerAuthority.timestamp(checked)
        await completePdfSignature(database.db, anchor.id, timestamped)
        reserved = undefined
        outcome = 'created'
        reply.code(201)
        return view(txHash, { ...timestamped, blockTime }, checked)
      } catch (error) {
        if (reserved) await releasePdfSignature(database.db, reserved.anchorId, reserved.digest)
        throw domainProblem(error)?.problem ?? error
      } finally {
        pdfSigningMetrics.outcomes.inc({ outcome })
      }
    },
  )

  const limitTimestampsPerUser = app.limiter({
    name: 'document-timestamps',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'document timestamp requests',
    key: (request) => request.user.id,
  })

  app.post(
    '/api/document-timestamps',
    {
      preHandler: (request) => limitTimestampsPerUser(request),
      bodyLimit: 1024,
      schema: {
        tags: ['relay'],
        summary: 'Timestamp a PDF’s byte range: the document timestamp of long-term validation (PAdES B-LTA)',
        security: [{ bearerAuth: [] }],
        body: DocumentTimestampBodySchema,
        response: {
          200: DocumentTimestampResponseSchema,
          400: ProblemSchema,
          401: ProblemSchema,
          429: ProblemSchema,
          503: ProblemSchema.describe('TIMESTAMP_UNAVAILABLE: no time-stamping authority answered; ask again'),
        },
      },
    },
    async (request) => {
      try {
        const token = await signerAuthority.documentTimestamp(request.body.digest)
        return { token: Buffer.from(token).toString('base64') }
      } catch (error) {
        throw domainProblem(error)?.problem ?? error
      }
    },
  )

  /** The signature's certificate is one this CA issued the caller, not revoked. */
  async function ensureOwnCertificate(checked: CheckedSignature, userId: string): Promise<void> {
    const status = await signerCertificateStatus(database.db, serialOf(checked.signer))
    if (!status || status.userId !== userId) {
      throw new ProblemError(403, 'CERTIFICATE_NOT_YOURS', 'The signature’s certificate was not issued to you')
    }
    if (status.revokedAt) {
      throw new ProblemError(403, 'CERTIFICATE_REVOKED', 'The signature’s certificate is revoked')
    }
  }
}

function view(txHash: string, kept: StoredPdfSignature, checked: CheckedSignature) {
  return {
    txHash,
    digest: kept.digest,
    cms: Buffer.from(kept.cms).toString('base64'),
    signer: subjectText(checked.signer),
    timestamp: { time: kept.timestampTime.toISOString(), authority: kept.timestampAuthority },
    blockTime: kept.blockTime.toISOString(),
  }
}

const refused = (reason: string) =>
  new ProblemError(422, 'PDF_SIGNATURE_REFUSED', `The PDF signature is refused: ${reason}`)

const conflict = () =>
  new ProblemError(409, 'PDF_SIGNATURE_CONFLICT', 'This anchor’s PDF signature was made for another document')
