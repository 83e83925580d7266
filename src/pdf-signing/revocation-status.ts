// What the signer CA says of its certificates' revocation, signed with the CA's own key (RFC 5280's CRL, RFC 6960's
// OCSP, the CA answering for itself), so that a signature can be checked later, and offline once a DSS holds them.
// Built with pkijs, signed through DocumentSigningKey: a WebCrypto key (the embedded default) or the PKCS#11 token's.
import { bytesEqual, type CmsSigner, fromHex } from '@docanchor/client'
import { Constructed, Enumerated, GeneralizedTime, Integer, OctetString, Primitive } from 'asn1js'
import {
  BasicOCSPResponse,
  type CertID,
  type Certificate,
  CertificateRevocationList,
  Extension,
  Extensions,
  OCSPRequest,
  OCSPResponse,
  ResponseBytes,
  ResponseData,
  RevokedCertificate,
  SingleResponse,
  Time,
} from 'pkijs'
import { caSignatureAlgorithm, caSignatureValue } from './ca-signature.ts'
import { publicKeyBits } from './certificates.ts'
import { serialHex } from './signer-certificate.ts'

export type CertificateStatus = { state: 'good' } | { state: 'revoked'; at: Date } | { state: 'unknown' }

/** How long an answer may be relied on: what a verifier caches, and how stale a revocation may be read. */
export const REVOCATION_VALIDITY_MS = 60 * 60 * 1000

const OID = {
  sha1: '1.3.14.3.2.26',
  sha256: '2.16.840.1.101.3.4.2.1',
  ocspBasic: '1.3.6.1.5.5.7.48.1.1',
  ocspNonce: '1.3.6.1.5.5.7.48.1.2',
  crlNumber: '2.5.29.20',
} as const

export class OcspRequestError extends Error {}

/** Whole seconds: DER's GeneralizedTime carries no fraction (RFC 5280, 4.1.2.5.2), and pkijs writes one otherwise. */
const wholeSeconds = (time: Date) => new Date(Math.floor(time.getTime() / 1000) * 1000)

/** The CRL (DER) of every revoked certificate not yet expired, valid for REVOCATION_VALIDITY_MS. */
export async function revocationList(
  ca: CmsSigner,
  revoked: readonly { serial: string; at: Date }[],
  at = new Date(),
): Promise<Uint8Array> {
  const now = wholeSeconds(at)
  const issuer = ca.certificates[0]!
  const crl = new CertificateRevocationList()
  crl.version = 1
  crl.signature = caSignatureAlgorithm(ca)
  crl.issuer = issuer.subject
  // UTCTime, as RFC 5280 asks for dates before 2050 (pkijs's GeneralizedTime carries milliseconds, which it forbids).
  crl.thisUpdate = new Time({ type: 0, value: now })
  crl.nextUpdate = new Time({ type: 0, value: new Date(now.getTime() + REVOCATION_VALIDITY_MS) })
  if (revoked.length > 0) {
    crl.revokedCertificates = revoked.map(
      (entry) =>
        new RevokedCertificate({
          userCertificate: new Integer({ valueHex: fromHex(entry.serial).buffer }),
          revocationDate: new Time({ type: 0, value: wholeSeconds(entry.at) }),
        }),
    )
  }
  // The CRL number a verifier orders lists by: the time it was made, in seconds.
  const number = new Integer({ value: Math.floor(now.getTime() / 1000) })
  crl.crlExtensions = new Extensions({
    extensions: [new Extension({ extnID: OID.crlNumber, extnValue: number.toBER(false) })],
  })
  crl.signatureAlgorithm = caSignatureAlgorithm(ca)
  const tbs = (crl.toSchema(true) as Constructed).valueBlock.value[0]!.toBER(false)
  crl.tbsView = new Uint8Array(tbs)
  crl.signatureValue = await caSignatureValue(ca, new Uint8Array(tbs))
  return new Uint8Array(crl.toSchema(false).toBER(false))
}

/**
 * The OCSP response (DER) to `requestDer`: for each certificate asked about that this CA issued, its status from
 * `statusOf` (a serial, lower-case hex); unknown for any other issuer. The nonce is echoed. A request that is not
 * one throws OcspRequestError (the route answers `malformedRequest`).
 */
export async function ocspResponse(
  ca: CmsSigner,
  requestDer: Uint8Array,
  statusOf: (serial: string) => Promise<CertificateStatus>,
  at = new Date(),
): Promise<Uint8Array> {
  const now = wholeSeconds(at)
  let request: OCSPRequest
  try {
    request = OCSPRequest.fromBER(requestDer.slice())
  } catch {
    throw new OcspRequestError('not an OCSP request')
  }
  const issuer = ca.certificates[0]!
  const responses: SingleResponse[] = []
  for (const { reqCert } of request.tbsRequest.requestList) {
    const ours = await issuedBy(reqCert, issuer)
    const status = ours ? await statusOf(serialHex(reqCert.serialNumber)) : ({ state: 'unknown' } as const)
    responses.push(
      new SingleResponse({
        certID: reqCert,
        certStatus: certStatus(status),
        thisUpdate: now,
        nextUpdate: new Date(now.getTime() + REVOCATION_VALIDITY_MS),
      }),
    )
  }
  const nonce = request.tbsRequest.requestExtensions?.find((extension) => extension.extnID === OID.ocspNonce)
  const data = new ResponseData({
    responderID: issuer.subject,
    producedAt: now,
    responses,
    ...(nonce && { responseExtensions: [nonce] }),
  })
  const tbs = data.toSchema(true).toBER(false)
  data.tbsView = new Uint8Array(tbs)
  const basic = new BasicOCSPResponse({
    tbsResponseData: data,
    signatureAlgorithm: caSignatureAlgorithm(ca),
    signature: await caSignatureValue(ca, new Uint8Array(tbs)),
  })
  const response = new OCSPResponse({
    responseStatus: new Enumerated({ value: 0 }),
    responseBytes: new ResponseBytes({
      responseType: OID.ocspBasic,
      response: new OctetString({ valueHex: basic.toSchema().toBER(false) }),
    }),
  })
  return new Uint8Array(response.toSchema().toBER(false))
}

/** `malformedRequest` (1): what answers a body that is no OCSP request. */
export function malformedOcspResponse(): Uint8Array {
  const response = new OCSPResponse({
    responseStatus: new Enumerated({ value: 1 }),
  })
  return new Uint8Array(response.toSchema().toBER(false))
}

function certStatus(status: CertificateStatus) {
  if (status.state === 'good') return new Primitive({ idBlock: { tagClass: 3, tagNumber: 0 } })
  if (status.state === 'unknown') return new Primitive({ idBlock: { tagClass: 3, tagNumber: 2 } })
  return new Constructed({
    idBlock: { tagClass: 3, tagNumber: 1 },
    value: [new GeneralizedTime({ valueDate: wholeSeconds(status.at) })],
  })
}

/** The request's certificate names this CA: the hash of its name and key, by the request's own hash algorithm. */
async function issuedBy(certId: CertID, issuer: Certificate): Promise<boolean> {
  const algorithm =
    certId.hashAlgorithm.algorithmId === OID.sha1
      ? 'SHA-1'
      : certId.hashAlgorithm.algorithmId === OID.sha256
        ? 'SHA-256'
        : undefined
  if (!algorithm) return false
  const nameDer = issuer.subject.toSchema().toBER(false)
  const nameHash = new Uint8Array(await crypto.subtle.digest(algorithm, nameDer))
  const keyHash = new Uint8Array(await crypto.subtle.digest(algorithm, publicKeyBits(issuer).slice()))
  return (
    bytesEqual(nameHash, new Uint8Array(certId.issuerNameHash.valueBlock.valueHexView)) &&
    bytesEqual(keyHash, new Uint8Array(certId.issuerKeyHash.valueBlock.valueHexView))
  )
}
