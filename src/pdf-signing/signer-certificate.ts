// The certificate the service's CA issues a signer (issue 37): for a key the signer holds (proved by its PKCS#10
// request), naming the account's verified e-mail and nothing unverified, as the CA/Browser Forum's mailbox-validated
// S/MIME profile asks: subject CN and emailAddress are the e-mail, and so is the rfc822Name. Key usage digitalSignature
// and nonRepudiation only (no key encipherment or agreement: it encrypts no mail); extended key usage documentSigning
// (RFC 9336) and emailProtection, because NSS (poppler's pdfsig, and every reader built on it) checks a PDF signer
// for the "e-mail signer" usage and refuses a certificate whose EKU lacks emailProtection; no serverAuth or
// clientAuth, so it passes for no TLS use. The sign-in provider that verified the e-mail is the certificate policy.
// The certificate is signed with the CA's key through DocumentSigningKey: a WebCrypto key (the embedded default) or
// the PKCS#11 token's.
import {
  type CmsSigner,
  certificateOf,
  distinguishedName,
  NAME_OID,
  SIGNER_EKU,
  SIGNER_POLICY_OID,
  type TrustAnchor,
  toHex,
} from '@docanchor/client'
import { BitString, Integer, ObjectIdentifier, OctetString } from 'asn1js'
import {
  AccessDescription,
  BasicConstraints,
  Certificate,
  CertificatePolicies,
  CertificationRequest,
  CRLDistributionPoints,
  DistributionPoint,
  Extension,
  ExtKeyUsage,
  GeneralName,
  GeneralNames,
  InfoAccess,
  id_AuthorityInfoAccess,
  id_BasicConstraints,
  id_CertificatePolicies,
  id_CRLDistributionPoints,
  id_ExtKeyUsage,
  id_KeyUsage,
  id_SubjectAltName,
  id_SubjectKeyIdentifier,
  PolicyInformation,
} from 'pkijs'
import { caSignatureAlgorithm, caSignatureValue } from './ca-signature.ts'
import { publicKeyBits } from './certificates.ts'
import { CertificateRequestError } from './errors.ts'
import { authorityKeyIdentifier, serialNumber } from './issue-certificate.ts'

const OID_EC_PUBLIC_KEY = '1.2.840.10045.2.1'
const OID_P256 = '1.2.840.10045.3.1.7'
const OID_OCSP = '1.3.6.1.5.5.7.48.1'
const OID_CA_ISSUERS = '1.3.6.1.5.5.7.48.2'

const uri = (value: string) => new GeneralName({ type: 6, value })

/** The public key of a PKCS#10 request whose signature proves its sender holds the private key; P-256 only. */
export async function provenRequest(der: Uint8Array): Promise<CertificationRequest> {
  let request: CertificationRequest
  try {
    request = CertificationRequest.fromBER(der.slice())
  } catch {
    throw new CertificateRequestError('the certificate request is not a PKCS#10 request (DER)')
  }
  const info = request.subjectPublicKeyInfo
  const curve = info.algorithm.algorithmParams
  if (info.algorithm.algorithmId !== OID_EC_PUBLIC_KEY || !(curve instanceof ObjectIdentifier)) {
    throw new CertificateRequestError('the certificate request is not for an ECDSA P-256 key')
  }
  if (curve.valueBlock.toString() !== OID_P256) {
    throw new CertificateRequestError('the certificate request is not for an ECDSA P-256 key')
  }
  const verified = await request.verify().catch(() => false)
  if (!verified) throw new CertificateRequestError('the certificate request is not signed by its key')
  return request
}

/** Where verifiers find the CA's certificate and its certificates' revocation status (AIA, CRL distribution point). */
export interface StatusUrls {
  issuer: string
  ocsp: string
  crl: string
}

/** The service's own routes for them (certificate-status.ts). */
export const STATUS_PATHS = { issuer: '/ca/issuer.cer', ocsp: '/ca/ocsp', crl: '/ca/crl' } as const

export function statusUrlsOf(publicUrl: string): StatusUrls {
  const base = publicUrl.replace(/\/+$/, '')
  return {
    issuer: `${base}${STATUS_PATHS.issuer}`,
    ocsp: `${base}${STATUS_PATHS.ocsp}`,
    crl: `${base}${STATUS_PATHS.crl}`,
  }
}

export interface SignerCertificateInput {
  request: CertificationRequest
  email: string
  trust: TrustAnchor
  issuer: CmsSigner
  notBefore: Date
  notAfter: Date
  urls: StatusUrls
}

export async function issueSignerCertificate(input: SignerCertificateInput): Promise<Certificate> {
  const issuerCertificate = input.issuer.certificates[0]!
  const certificate = new Certificate()
  certificate.version = 2
  certificate.serialNumber = new Integer({ valueHex: serialNumber() })
  certificate.issuer = issuerCertificate.subject
  certificate.subject = distinguishedName([
    [NAME_OID.emailAddress, input.email],
    [NAME_OID.commonName, input.email],
  ])
  certificate.notBefore.value = input.notBefore
  certificate.notAfter.value = input.notAfter
  certificate.subjectPublicKeyInfo = input.request.subjectPublicKeyInfo
  const keyId = new Uint8Array(await crypto.subtle.digest('SHA-1', publicKeyBits(certificate).slice()))
  certificate.extensions = [
    extension(id_BasicConstraints, new BasicConstraints({ cA: false }).toSchema(), true),
    // digitalSignature (bit 0) and nonRepudiation (bit 1).
    extension(id_KeyUsage, new BitString({ valueHex: new Uint8Array([0xc0]).buffer, unusedBits: 6 }), true),
    extension(
      id_ExtKeyUsage,
      new ExtKeyUsage({ keyPurposes: [SIGNER_EKU.documentSigning, SIGNER_EKU.emailProtection] }).toSchema(),
    ),
    extension(
      id_SubjectAltName,
      new GeneralNames({ names: [new GeneralName({ type: 1, value: input.email })] }).toSchema(),
    ),
    extension(
      id_CertificatePolicies,
      new CertificatePolicies({
        certificatePolicies: [new PolicyInformation({ policyIdentifier: SIGNER_POLICY_OID[input.trust] })],
      }).toSchema(),
    ),
    extension(id_SubjectKeyIdentifier, new OctetString({ valueHex: keyId.buffer })),
    ...[authorityKeyIdentifier(issuerCertificate)].filter((e): e is Extension => e !== undefined),
    extension(
      id_AuthorityInfoAccess,
      new InfoAccess({
        accessDescriptions: [
          new AccessDescription({ accessMethod: OID_OCSP, accessLocation: uri(input.urls.ocsp) }),
          new AccessDescription({ accessMethod: OID_CA_ISSUERS, accessLocation: uri(input.urls.issuer) }),
        ],
      }).toSchema(),
    ),
    extension(
      id_CRLDistributionPoints,
      new CRLDistributionPoints({
        distributionPoints: [new DistributionPoint({ distributionPoint: [uri(input.urls.crl)] })],
      }).toSchema(),
    ),
  ]
  return signWith(certificate, input.issuer)
}

/** Signs the certificate's to-be-signed part with the issuer's key, whatever holds it. */
async function signWith(certificate: Certificate, issuer: CmsSigner): Promise<Certificate> {
  certificate.signature = caSignatureAlgorithm(issuer)
  certificate.signatureAlgorithm = caSignatureAlgorithm(issuer)
  certificate.signatureValue = await caSignatureValue(issuer, new Uint8Array(certificate.encodeTBS().toBER(false)))
  // Parsed back from its DER, so that what is returned is exactly what was signed.
  return certificateOf(new Uint8Array(certificate.toSchema(true).toBER(false)))
}

function extension(extnID: string, value: { toBER(sizeOnly?: boolean): ArrayBuffer }, critical = false): Extension {
  return new Extension({ extnID, critical, extnValue: value.toBER(false) })
}

/** The certificate's serial number, lower-case hex: how the store and the revocation lists name it. */
export function serialOf(certificate: Certificate): string {
  return serialHex(certificate.serialNumber)
}

/** A serial number (a DER INTEGER, as a certificate, a CRL or an OCSP request carries it) as lower-case hex. */
export function serialHex(serial: Integer): string {
  return toHex(new Uint8Array(serial.valueBlock.valueHexView))
}
