// RFC 3161 timestamp tokens: a TSA's signed statement that a hash (the imprint) existed at a time. Read from a PDF
// signature's CMS (the signatureTimeStampToken attribute, over the signature's value) and, by the service, from a
// TSA's reply before it embeds one.

import type { Certificate } from 'pkijs'
import { TSTInfo } from 'pkijs'
import { chainTrust } from './certificate-trust.ts'
import { buffer, bytesEqual, OID, octets, signedDataOf } from './der.ts'
import { digestFor, signerCertificateOf, signerInfoVerifies } from './signer-info-signature.ts'
import { commonName } from './x509-text.ts'

export interface TimestampCheck {
  /** The token parses, its signature verifies and its imprint is the expected hash. */
  valid: boolean
  /** The TSA's certificate chains to a trusted root and is for timestamping. */
  trusted: boolean
  /** The time the TSA states; null when the token cannot be read. */
  time: Date | null
  /** The TSA's name (its certificate's common name). */
  authority: string | null
  /** The TSTInfo's nonce, for a requester that sent one. */
  nonce: bigint | null
  /** The TSA's certificate, and every certificate the token carries (for its issuer). */
  certificate: Certificate | undefined
  carried: Certificate[]
  problems: string[]
}

/** What a token must timestamp: bytes (hashed in the token's own imprint algorithm), or their SHA-256. */
export type Timestamped = { bytes: Uint8Array } | { sha256: Uint8Array }

/**
 * Checks `token` (a ContentInfo's DER) against what it must timestamp: a signature's value, a PDF's byte range, or
 * the SHA-256 a requester asked a TSA to timestamp.
 */
export async function checkTimestampToken(
  token: Uint8Array,
  timestamped: Timestamped,
  roots: Certificate[],
): Promise<TimestampCheck> {
  const unreadable = (problem: string): TimestampCheck => ({
    valid: false,
    trusted: false,
    time: null,
    authority: null,
    nonce: null,
    certificate: undefined,
    carried: [],
    problems: [problem],
  })
  const signed = signedDataOf(token)
  const content = signed?.encapContentInfo.eContent
  const signerInfo = signed?.signerInfos.length === 1 ? signed.signerInfos[0] : undefined
  if (!signed || signed.encapContentInfo.eContentType !== OID.tstInfo || !content || !signerInfo) {
    return unreadable('the timestamp token is not a timestamp token')
  }
  const tstInfo = octets(content)
  let info: TSTInfo
  try {
    info = TSTInfo.fromBER(buffer(tstInfo))
  } catch {
    return unreadable('the timestamp token cannot be read')
  }
  const problems: string[] = []
  const hashed = new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView)
  const algorithm = info.messageImprint.hashAlgorithm.algorithmId
  const expected =
    'sha256' in timestamped
      ? algorithm === OID.sha256
        ? timestamped.sha256
        : undefined
      : await imprintOf(algorithm, timestamped.bytes)
  if (!expected || !bytesEqual(hashed, expected)) {
    problems.push('the timestamp is for something else than this signature')
  }
  const signer = signerCertificateOf(signed, signerInfo)
  const contentDigest = await digestFor(signerInfo, tstInfo)
  if (!signer || !contentDigest || !(await signerInfoVerifies(signerInfo, signer, contentDigest))) {
    problems.push('the timestamp authority’s signature does not verify')
  }
  const time = info.genTime
  const carried = (signed.certificates ?? []).filter((c): c is Certificate => 'subjectPublicKeyInfo' in c)
  let trusted = false
  if (signer) {
    const forTimestamping = signer.extensions?.some(
      (extension) =>
        extension.extnID === OID.extKeyUsage &&
        (extension.parsedValue as { keyPurposes?: string[] } | undefined)?.keyPurposes?.includes(OID.timeStamping),
    )
    trusted = forTimestamping === true && (await chainTrust(signer, carried, roots, time)).trusted
  }
  return {
    valid: problems.length === 0,
    trusted,
    time,
    authority: signer ? commonName(signer) : null,
    nonce: info.nonce ? info.nonce.toBigInt() : null,
    certificate: signer,
    carried,
    problems,
  }
}

const IMPRINT_ALGORITHMS: Record<string, string> = {
  [OID.sha256]: 'SHA-256',
  '2.16.840.1.101.3.4.2.2': 'SHA-384',
  '2.16.840.1.101.3.4.2.3': 'SHA-512',
}

async function imprintOf(algorithm: string, bytes: Uint8Array): Promise<Uint8Array | undefined> {
  const name = IMPRINT_ALGORITHMS[algorithm]
  if (!name) return undefined
  return new Uint8Array(await crypto.subtle.digest(name, bytes as Uint8Array<ArrayBuffer>))
}
