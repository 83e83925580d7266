// One signature, start to finish: hash the file as it is, build and encrypt the payload, anchor it (through the
// caller's `anchor`, the relay in practice), then append the revision with the QR code and the metadata.

import { type AnchorPayloadInput, buildAnchorPayload } from '../formats/anchor-payload.ts'
import { compositeHash } from '../formats/composite-hash.ts'
import { ZERO_TX_HASH } from '../formats/constants.ts'
import type { TrustAnchor } from '../formats/field-rules.ts'
import { toHex } from '../formats/hex.ts'
import { encryptPayload, generatePayloadKey } from '../formats/payload-cipher.ts'
import { type PdfSignature, signatureFromPayload } from '../formats/pdf-metadata.ts'
import { buildQrUrl } from '../formats/qr-url.ts'
import { prepareSignatureRevision, type StampPlacement, type StampRect } from './append-signature-revision.ts'
import {
  addLongTermValidation,
  type LongTermValidationOptions,
  type LongTermValidationResult,
} from './long-term-validation.ts'

export interface AnchorRequest {
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
  /**
   * The payload's salt, so that the service attests the relaying account (it commits to it and forgets the salt);
   * absent when the signer asked for no attestation (`attestIdentity: false`).
   */
  salt?: string
}

export interface SignPdfOptions {
  signer: AnchorPayloadInput['signer']
  geo?: AnchorPayloadInput['geo']
  /** Signing time; default now. */
  timestamp?: Date
  placement?: StampPlacement
  /**
   * Whether the service is to attest the relaying account (default true): false for a signer e-mail that is not the
   * account's, which an attestation would contradict; verifiers then show the identity as claimed.
   */
  attestIdentity?: boolean
  /** The user password of an encrypted PDF that has one (owner-password-only PDFs need none). */
  password?: string
  /** Base of the QR URL, e.g. `https://verify.example.com`. */
  verifyBaseUrl: string
  /** Written to the metadata so that anyone can check the anchor with a public RPC node. */
  chainId?: number
  contractAddress?: string
  /** Anchors the composite hash; resolves with the confirmed transaction hash. */
  anchor: (request: AnchorRequest) => Promise<{ txHash: string }>
  /**
   * The PDF signature's CMS over the revision's byte range, for the anchor just made: in practice made with the
   * signer's own key and certificate (`anchoredSignatureCms`), its signed attributes naming the anchor, then
   * timestamped by the service's `POST /api/pdf-signatures`, which sees only the signature. Resolves with the CMS's DER.
   */
  pdfSignature: (request: PdfSignatureRequest) => Promise<Uint8Array>
  /**
   * Validation data and a document timestamp after the signature (PAdES B-LTA: addLongTermValidation), so that it
   * verifies offline once its certificates have expired; without it the signature is B-T.
   */
  longTermValidation?: Omit<LongTermValidationOptions, 'password'>
}

export interface PdfSignatureRequest {
  /** The confirmed anchor the PDF signature is for. */
  txHash: string
  /** SHA-256 of the revision's byte range, lower-case hex. */
  digest: string
  /** The anchor's composite hash, chain and contract: what the CMS's anchor attribute names. */
  compositeHash: string
  chainId: number | undefined
  contractAddress: string | undefined
}

export interface SignPdfResult {
  bytes: Uint8Array
  /** What long-term validation could not gather (addLongTermValidation's warnings); empty without it. */
  warnings: string[]
  signature: PdfSignature
  signatures: PdfSignature[]
  qrUrl: string
  stamp: StampRect
  /** Length of the signed prefix: the input file (and the cross-reference revision rebuilt after it, if it was). */
  signedBytes: number
}

export async function signPdf(input: Uint8Array, options: SignPdfOptions): Promise<SignPdfResult> {
  // Everything that can fail on the file itself fails here, before the anchor is paid for.
  const prepared = await prepareSignatureRevision(input, options.placement, { password: options.password })
  // The base is the input, unless the input's lost cross-reference data had to be rebuilt after it.
  const { base } = prepared
  const documentHash = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', base as Uint8Array<ArrayBuffer>)))
  const payload = buildAnchorPayload({
    documentHash,
    signer: options.signer,
    timestamp: options.timestamp ?? new Date(),
    geo: options.geo ?? null,
  })
  const serialized = JSON.stringify(payload)
  const key = generatePayloadKey()
  const request: AnchorRequest = {
    compositeHash: await compositeHash(serialized),
    previousTxHash: prepared.signatures[prepared.signatures.length - 1]?.tx_hash ?? ZERO_TX_HASH,
    encryptedPayload: await encryptPayload(serialized, key),
    ...(options.attestIdentity !== false && { salt: payload.salt }),
  }
  const { txHash } = await options.anchor(request)
  const qrUrl = buildQrUrl({ verifyBaseUrl: options.verifyBaseUrl, txHash, key })
  const signature = signatureFromPayload(payload, {
    compositeHash: request.compositeHash,
    txHash,
    qrUrl,
    chainId: options.chainId,
    contractAddress: options.contractAddress,
  })
  const signatures = [...prepared.signatures, signature]
  const bytes = await prepared.write({
    qrUrl,
    signatures,
    signerName: options.signer.name,
    reason: signatureReason(txHash, options),
    time: new Date(payload.ts * 1000),
    sign: (digest) =>
      options.pdfSignature({
        txHash,
        digest: toHex(digest),
        compositeHash: request.compositeHash,
        chainId: options.chainId,
        contractAddress: options.contractAddress,
      }),
  })
  const archived = options.longTermValidation
    ? await archive(bytes, { ...options.longTermValidation, password: options.password })
    : { bytes, warnings: [] }
  return {
    bytes: archived.bytes,
    warnings: [...prepared.warnings, ...archived.warnings],
    signature,
    signatures,
    qrUrl,
    stamp: prepared.stamp,
    signedBytes: base.length,
  }
}

/**
 * The signed file with its long-term validation data; the signed file as it is when that fails: the anchor is paid
 * for and the signature complete (B-T), and the validation data can be added later.
 */
async function archive(bytes: Uint8Array, options: LongTermValidationOptions): Promise<LongTermValidationResult> {
  try {
    return await addLongTermValidation(bytes, options)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    return {
      bytes,
      warnings: [
        `no long-term validation data was added (${reason}): the signature is B-T until it is (anchor extend)`,
      ],
    }
  }
}

const SIGNED_IN_WITH: Record<TrustAnchor, string> = {
  email: 'an e-mail code',
  google: 'Google',
  microsoft: 'Microsoft',
}

/** The PDF signature's /Reason, as readers show it: what was anchored where, and how the identity stands. */
function signatureReason(txHash: string, options: SignPdfOptions): string {
  const where = options.chainId === undefined ? '' : ` on chain ${options.chainId}`
  const { trust } = options.signer
  const identity =
    options.attestIdentity === false
      ? 'identity claimed by the signer, not attested'
      : `identity attested by the service${trust ? `: signed in with ${SIGNED_IN_WITH[trust]}` : ''}`
  return `Anchored${where} in transaction ${txHash}; ${identity}`
}
