// RFC 3161 timestamp tokens: a TSA's signed statement that a hash (the imprint) existed at a time. Read from a PDF
// signature's CMS (the signatureTimeStampToken attribute, over the signature's value) and, by the service, from a
// TSA's reply before it embeds one.

import type { Certificate } from 'pkijs'
import { TSTInfo } from 'pkijs'
import { chainTrust } from './certificate-trust.ts'
import { buffer, bytesEqual, OID, octets, sha256, signedDataOf } from './der.ts'
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
  problems: string[]
}

/**
 * Checks `token` (a ContentInfo's DER) against `timestamped`, the bytes whose SHA-256 it must timestamp (a
 * signature's value).
 */
export async function checkTimestampToken(
  token: Uint8Array,
  timestamped: Uint8Array,
  roots: Certificate[],
): Promise<TimestampCheck> {
  const imprint = await sha256(timestamped)
  const unreadable = (problem: string): TimestampCheck => ({
    valid: false,
    trusted: false,
    time: null,
    authority: null,
    nonce: null,
    problems: [problem],
  })
  const signed = signedDataOf(token)
  const content = signed?.encapContentInfo.eContent
  if (!signed || signed.encapContentInfo.eContentType !== OID.tstInfo || !content) {
    return unreadable('the timestamp token is not a timestamp token')
  }
  let info: TSTInfo
  try {
    info = TSTInfo.fromBER(buffer(octets(content)))
  } catch {
    return unreadable('the timestamp token cannot be read')
  }
  const problems: string[] = []
  const hashed = new Uint8Array(info.messageImprint.hashedMessage.valueBlock.valueHexView)
  if (info.messageImprint.hashAlgorithm.algorithmId !== OID.sha256 || !bytesEqual(hashed, imprint)) {
    problems.push('the timestamp is for something else than this signature')
  }
  let signer: Certificate | undefined
  try {
    // pkijs checks the imprint against the data too, so it is given the timestamped bytes.
    const result = await signed.verify({ signer: 0, data: buffer(timestamped), checkChain: false, extendedMode: true })
    if (!result.signatureVerified) problems.push('the timestamp authority’s signature does not verify')
    signer = result.signerCertificate ?? undefined
  } catch {
    problems.push('the timestamp authority’s signature does not verify')
  }
  const time = info.genTime
  let trusted = false
  if (signer) {
    const forTimestamping = signer.extensions?.some(
      (extension) =>
        extension.extnID === OID.extKeyUsage &&
        (extension.parsedValue as { keyPurposes?: string[] } | undefined)?.keyPurposes?.includes(OID.timeStamping),
    )
    const carried = (signed.certificates ?? []).filter((c): c is Certificate => 'subjectPublicKeyInfo' in c)
    trusted = forTimestamping === true && (await chainTrust(signer, carried, roots, time)).trusted
  }
  return {
    valid: problems.length === 0,
    trusted,
    time,
    authority: signer ? commonName(signer) : null,
    nonce: info.nonce ? info.nonce.toBigInt() : null,
    problems,
  }
}
