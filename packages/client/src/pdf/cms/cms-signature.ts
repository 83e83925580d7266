// A PDF signature's CMS (adbe.pkcs7.detached or ETSI.CAdES.detached): do the signed bytes hash to its messageDigest,
// does its signature verify, does its certificate chain to a trusted root, and what does its timestamp token say.
// The same checks for the service's signatures and for any other product's.
import type { Certificate } from 'pkijs'
import { type AnchorReference, readAnchorAttribute } from '../anchor-attribute.ts'
import { chainTrust } from './certificate-trust.ts'
import { buffer, bytesEqual, certificateDer, OID, sha256, signedDataOf } from './der.ts'
import { signatureValue } from './signed-data.ts'
import { checkTimestampToken, type TimestampCheck } from './timestamp-token.ts'
import { commonName, subjectText } from './x509-text.ts'

export interface CmsSignatureCheck {
  /** The signed bytes are those signed and the signature verifies. */
  valid: boolean
  /** The signer's certificate, as readers show it, and its DER; null when the CMS names none it carries. */
  signer: { subject: string; commonName: string; certificate: Uint8Array } | null
  /** The certificate chains to a trusted root, valid at the timestamp's time (else now). */
  trusted: boolean
  /** Why it is not trusted; null when it is. */
  trustProblem: string | null
  /** The signature timestamp token, when the CMS carries one. */
  timestamp: TimestampCheck | null
  /** ESS signing-certificate-v2 (PAdES requires it). */
  signingCertificateV2: boolean
  /** The anchor its signed attributes name (anchor-attribute.ts); null when they name none. */
  anchor: AnchorReference | null
  /** Every certificate the CMS carries (for its signer's issuer). */
  carried: Certificate[]
  problems: string[]
}

/** `signedBytes`: the file's bytes in the signature's /ByteRange, concatenated. */
export async function checkCmsSignature(
  cms: Uint8Array,
  signedBytes: Uint8Array,
  roots: Certificate[],
  timestampRoots: Certificate[] = roots,
  now = new Date(),
): Promise<CmsSignatureCheck> {
  const signed = signedDataOf(cms)
  const signerInfo = signed?.signerInfos[0]
  if (!signed || !signerInfo) {
    return {
      valid: false,
      signer: null,
      trusted: false,
      trustProblem: null,
      timestamp: null,
      signingCertificateV2: false,
      anchor: null,
      carried: [],
      problems: ['its /Contents is not a CMS signature'],
    }
  }
  const problems: string[] = []
  const attributes = signerInfo.signedAttrs?.attributes ?? []
  const digestAttribute = attributes.find((attribute) => attribute.type === OID.messageDigest)?.values[0]
  const messageDigest = digestAttribute ? new Uint8Array(digestAttribute.valueBlock.valueHexView) : undefined
  if (!messageDigest || !bytesEqual(messageDigest, await sha256(signedBytes))) {
    problems.push('the document’s bytes are not what was signed')
  }
  let signer: Certificate | undefined
  try {
    const result = await signed.verify({ signer: 0, data: buffer(signedBytes), checkChain: false, extendedMode: true })
    signer = result.signerCertificate ?? undefined
    if (!result.signatureVerified && problems.length === 0) problems.push('the signature does not verify')
  } catch (error) {
    signer = (error as { signerCertificate?: Certificate }).signerCertificate ?? undefined
    if (problems.length === 0) problems.push('the signature does not verify')
  }
  const tokenAttribute = signerInfo.unsignedAttrs?.attributes.find(
    (attribute) => attribute.type === OID.signatureTimeStampToken,
  )?.values[0]
  const timestamp = tokenAttribute
    ? await checkTimestampToken(
        new Uint8Array(tokenAttribute.toBER(false)),
        { bytes: signatureValue(signed) },
        timestampRoots,
      )
    : null
  if (timestamp && !timestamp.valid) problems.push(...timestamp.problems)
  const carried = (signed.certificates ?? []).filter((c): c is Certificate => 'subjectPublicKeyInfo' in c)
  const trust = signer
    ? await chainTrust(signer, carried, roots, (timestamp?.valid && timestamp.time) || now)
    : { trusted: false, reason: 'the CMS does not carry its signer’s certificate' }
  return {
    valid: problems.length === 0 && signer !== undefined,
    signer: signer
      ? { subject: subjectText(signer), commonName: commonName(signer), certificate: certificateDer(signer) }
      : null,
    trusted: trust.trusted,
    trustProblem: trust.trusted ? null : (trust.reason ?? null),
    timestamp,
    signingCertificateV2: attributes.some((attribute) => attribute.type === OID.signingCertificateV2),
    anchor: readAnchorAttribute(signerInfo),
    carried,
    problems,
  }
}
