// One signature, start to finish: hash the file as it is, build and encrypt the payload, anchor it (through the
// caller's `anchor`, the relay in practice), then append the revision with the QR code and the metadata.

import { type AnchorPayloadInput, buildAnchorPayload } from '../formats/anchor-payload.ts'
import { compositeHash } from '../formats/composite-hash.ts'
import { ZERO_TX_HASH } from '../formats/constants.ts'
import { toHex } from '../formats/hex.ts'
import { encryptPayload, generatePayloadKey } from '../formats/payload-cipher.ts'
import { type PdfSignature, signatureFromPayload } from '../formats/pdf-metadata.ts'
import { buildQrUrl } from '../formats/qr-url.ts'
import { prepareSignatureRevision, type StampPlacement, type StampRect } from './append-signature-revision.ts'

export interface AnchorRequest {
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
  /** The payload's salt, so that the service attests the relaying account (it commits to it and forgets the salt). */
  salt: string
}

export interface SignPdfOptions {
  signer: AnchorPayloadInput['signer']
  geo?: AnchorPayloadInput['geo']
  /** Signing time; default now. */
  timestamp?: Date
  placement?: StampPlacement
  /** Base of the QR URL, e.g. `https://verify.example.com`. */
  verifyBaseUrl: string
  /** Written to the metadata so that anyone can check the anchor with a public RPC node. */
  chainId?: number
  contractAddress?: string
  /** Anchors the composite hash; resolves with the confirmed transaction hash. */
  anchor: (request: AnchorRequest) => Promise<{ txHash: string }>
}

export interface SignPdfResult {
  bytes: Uint8Array
  signature: PdfSignature
  signatures: PdfSignature[]
  qrUrl: string
  stamp: StampRect
  /** Length of the signed prefix: the input file. */
  signedBytes: number
}

export async function signPdf(input: Uint8Array, options: SignPdfOptions): Promise<SignPdfResult> {
  // Everything that can fail on the file itself fails here, before the anchor is paid for.
  const prepared = await prepareSignatureRevision(input, options.placement)
  const documentHash = toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', input as Uint8Array<ArrayBuffer>)))
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
    salt: payload.salt,
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
  const bytes = await prepared.write({ qrUrl, signatures })
  return { bytes, signature, signatures, qrUrl, stamp: prepared.stamp, signedBytes: input.length }
}
