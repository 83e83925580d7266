// Whether a CMS signer's signature holds, checked by hand where pkijs's SignedData.verify needs the signed bytes
// themselves: a timestamp token checked against an imprint (the service timestamps a digest it is given, never the
// document), and a signer's detached CMS checked against the digest its signed attributes state.
import type { BaseBlock } from 'asn1js'
import { type Certificate, getCrypto, type SignedData, type SignerInfo } from 'pkijs'
import { bytesEqual, OID } from './der.ts'

/** The certificate the CMS carries for `signerInfo` (by issuer and serial, or by subject key identifier). */
export function signerCertificateOf(signed: SignedData, signerInfo: SignerInfo): Certificate | undefined {
  const certificates = (signed.certificates ?? []).filter((c): c is Certificate => 'subjectPublicKeyInfo' in c)
  const { sid } = signerInfo
  if ('serialNumber' in sid) {
    return certificates.find(
      (certificate) => certificate.serialNumber.isEqual(sid.serialNumber) && certificate.issuer.isEqual(sid.issuer),
    )
  }
  const keyId = new Uint8Array(
    (sid as BaseBlock & { valueBlock: { valueHexView: Uint8Array } }).valueBlock.valueHexView,
  )
  return certificates.find((certificate) => {
    const extension = certificate.extensions?.find((e) => e.extnID === '2.5.29.14')
    const value = extension?.parsedValue as { valueBlock?: { valueHexView: Uint8Array } } | undefined
    return value?.valueBlock !== undefined && bytesEqual(new Uint8Array(value.valueBlock.valueHexView), keyId)
  })
}

/** The messageDigest signed attribute; undefined when there is none. */
export function messageDigestOf(signerInfo: SignerInfo): Uint8Array | undefined {
  const value = signerInfo.signedAttrs?.attributes.find((a) => a.type === OID.messageDigest)?.values[0]
  return value ? new Uint8Array(value.valueBlock.valueHexView) : undefined
}

/**
 * Whether `signerInfo`'s signature over its signed attributes verifies with `certificate`'s key and those attributes
 * state `contentDigest` (the digest of what is signed, in the signer's digest algorithm).
 */
export async function signerInfoVerifies(
  signerInfo: SignerInfo,
  certificate: Certificate,
  contentDigest: Uint8Array,
): Promise<boolean> {
  const stated = messageDigestOf(signerInfo)
  if (!signerInfo.signedAttrs || !stated || !bytesEqual(stated, contentDigest)) return false
  const engine = getCrypto(true)
  const hash = engine.getAlgorithmByOID<{ name: string }>(signerInfo.digestAlgorithm.algorithmId, false)
  if (!('name' in hash)) return false
  // As they were sent (pkijs keeps their encoding), tagged as the SET the signature covers.
  const signedAttributes = new Uint8Array(signerInfo.signedAttrs.encodedValue).slice()
  signedAttributes[0] = 0x31
  return engine
    .verifyWithPublicKey(
      signedAttributes,
      signerInfo.signature,
      certificate.subjectPublicKeyInfo,
      signerInfo.signatureAlgorithm,
      hash.name,
    )
    .catch(() => false)
}

/** The digest of `data` in the signer's digest algorithm; undefined for an algorithm WebCrypto does not have. */
export async function digestFor(signerInfo: SignerInfo, data: Uint8Array): Promise<Uint8Array | undefined> {
  const hash = getCrypto(true).getAlgorithmByOID<{ name: string }>(signerInfo.digestAlgorithm.algorithmId, false)
  if (!('name' in hash)) return undefined
  return new Uint8Array(await crypto.subtle.digest(hash.name, data as Uint8Array<ArrayBuffer>))
}
