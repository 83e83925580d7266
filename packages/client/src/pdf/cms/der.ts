// DER in and out of pkijs, which speaks ArrayBuffer.
import { fromBER, type OctetString } from 'asn1js'
import { Certificate, ContentInfo, SignedData } from 'pkijs'

export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  contentType: '1.2.840.113549.1.9.3',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  tstInfo: '1.2.840.113549.1.9.16.1.4',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
  sha256: '2.16.840.1.101.3.4.2.1',
  timeStamping: '1.3.6.1.5.5.7.3.8',
  extKeyUsage: '2.5.29.37',
} as const

/** A copy of exactly these bytes: a view's `.buffer` may hold more (the pool it was cut from). */
export function buffer(bytes: Uint8Array): ArrayBuffer {
  return new Uint8Array(bytes).buffer
}

/** The SignedData of a CMS ContentInfo's DER; undefined when it is not one. */
export function signedDataOf(der: Uint8Array): SignedData | undefined {
  try {
    const parsed = fromBER(buffer(der))
    if (parsed.offset === -1) return undefined
    const info = new ContentInfo({ schema: parsed.result })
    if (info.contentType !== OID.signedData) return undefined
    return new SignedData({ schema: info.content })
  } catch {
    return undefined
  }
}

/** A certificate's DER as pkijs's Certificate; throws when it is not one. */
export function certificateOf(der: Uint8Array): Certificate {
  const parsed = fromBER(buffer(der))
  if (parsed.offset === -1) throw new Error('a certificate is not DER')
  return new Certificate({ schema: parsed.result })
}

export function certificateDer(certificate: Certificate): Uint8Array {
  return new Uint8Array(certificate.toSchema(true).toBER(false))
}

export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((byte, i) => byte === b[i])
}

export async function sha256(data: Uint8Array): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>))
}

/** An OCTET STRING's bytes, whether DER (primitive) or BER (constructed from pieces, as some signers write). */
export function octets(value: OctetString): Uint8Array {
  if (!value.idBlock.isConstructed) return new Uint8Array(value.valueBlock.valueHexView)
  const pieces = (value.valueBlock.value as OctetString[]).map(octets)
  const joined = new Uint8Array(pieces.reduce((sum, piece) => sum + piece.length, 0))
  let at = 0
  for (const piece of pieces) {
    joined.set(piece, at)
    at += piece.length
  }
  return joined
}

const PEM_CERTIFICATE = /-----BEGIN CERTIFICATE-----([A-Za-z0-9+/=\s]+?)-----END CERTIFICATE-----/g

/** The DER of every certificate in a PEM text, in order (none when it holds none). */
export function pemCertificates(pem: string): Uint8Array[] {
  return [...pem.matchAll(PEM_CERTIFICATE)].map((match) =>
    Uint8Array.from(atob(match[1]!.replace(/\s+/g, '')), (char) => char.charCodeAt(0)),
  )
}
