// Certificates for the service's signing identities, made with pkijs on WebCrypto keys (Web APIs only, so the client
// package's tests sign with them in Chromium too): a CA, a PDF-signing certificate and a timestamping certificate,
// each with the extensions readers and RFC 3161 expect. The embedded default stores one such identity under DATA_DIR
// (development-certificates.ts); tests make fresh ones, and certify a PKCS#11 token's key with a CA of their own.

import { type CmsSigner, distinguishedName, EC_SIGNING_KEY, NAME_OID, webCryptoSigningKey } from '@docanchor/client'
import { BitString, Integer, OctetString } from 'asn1js'
import {
  AuthorityKeyIdentifier,
  BasicConstraints,
  Certificate,
  Extension,
  ExtKeyUsage,
  id_AuthorityKeyIdentifier,
  id_BasicConstraints,
  id_ExtKeyUsage,
  id_KeyUsage,
  id_SubjectKeyIdentifier,
} from 'pkijs'

export interface SigningIdentity {
  /** The CA that certifies signers' keys; its certificates are [CA]. */
  ca: CmsSigner
  /** Signs the development TSA's tokens; its certificates are [TSA, CA]. */
  timestamping: CmsSigner
}

export const DEVELOPMENT_NAMES = {
  ca: 'Document Anchoring Service development CA (untrusted)',
  timestamping: 'Document Anchoring Service development TSA (untrusted)',
  organization: 'Development only: not a trusted identity',
} as const

export const EC_KEY = EC_SIGNING_KEY
const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000
const OID_TIME_STAMPING = '1.3.6.1.5.5.7.3.8'

export type CertificateRole = 'ca' | 'timestamping'

export interface Issued {
  certificate: Certificate
  privateKey: CryptoKey
}

/** A CA and, issued by it, a timestamping certificate, each with a fresh P-256 key. */
export async function makeIdentity(): Promise<{ ca: Issued; timestamping: Issued }> {
  const ca = await issueCertificate({ name: DEVELOPMENT_NAMES.ca, role: 'ca' })
  const timestamping = await issueCertificate({
    name: DEVELOPMENT_NAMES.timestamping,
    role: 'timestamping',
    issuer: ca,
  })
  return { ca, timestamping }
}

export function identityOf(ca: Issued, timestamping: Issued): SigningIdentity {
  return {
    ca: { key: webCryptoSigningKey(ca.privateKey), certificates: [ca.certificate] },
    timestamping: {
      key: webCryptoSigningKey(timestamping.privateKey),
      certificates: [timestamping.certificate, ca.certificate],
    },
  }
}

/** A certificate for a fresh P-256 key, self-signed when no issuer is given (a CA). */
export async function issueCertificate(options: {
  name: string
  /** O=; default: the development identity's, which says it is not to be trusted. */
  organization?: string
  role: CertificateRole
  issuer?: Issued
  validFrom?: Date
  validForMs?: number
}): Promise<Issued> {
  const pair = (await crypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as CryptoKeyPair
  const certificate = await certify(pair.publicKey, {
    ...options,
    issuer: options.issuer ?? { certificate: undefined, privateKey: pair.privateKey },
  })
  return { certificate, privateKey: pair.privateKey }
}

/** A certificate for `publicKey` (a token's, say), signed by `issuer`; self-signed when the issuer has no certificate. */
export async function certify(
  publicKey: CryptoKey,
  options: {
    name: string
    organization?: string
    role: CertificateRole
    issuer: { certificate: Certificate | undefined; privateKey: CryptoKey }
    validFrom?: Date
    validForMs?: number
  },
): Promise<Certificate> {
  const certificate = new Certificate()
  certificate.version = 2
  certificate.serialNumber = new Integer({ valueHex: serialNumber() })
  const organization = options.organization ?? DEVELOPMENT_NAMES.organization
  certificate.subject = distinguishedName([
    [NAME_OID.country, 'ZZ'],
    [NAME_OID.organization, organization],
    [NAME_OID.commonName, options.name],
  ])
  certificate.issuer = options.issuer.certificate?.subject ?? certificate.subject
  const from = options.validFrom ?? new Date(Date.now() - 60_000)
  certificate.notBefore.value = from
  certificate.notAfter.value = new Date(from.getTime() + (options.validForMs ?? TEN_YEARS_MS))
  await certificate.subjectPublicKeyInfo.importKey(publicKey)
  const keyId = new Uint8Array(await certificate.getKeyHash('SHA-1'))
  certificate.extensions = extensions(options.role, keyId, options.issuer.certificate)
  await certificate.sign(options.issuer.privateKey, 'SHA-256')
  return certificate
}

function extensions(role: CertificateRole, keyId: Uint8Array, issuer: Certificate | undefined): Extension[] {
  const list: Extension[] = []
  const basic = new BasicConstraints({ cA: role === 'ca' })
  list.push(new Extension({ extnID: id_BasicConstraints, critical: true, extnValue: basic.toSchema().toBER(false) }))
  // keyCertSign | cRLSign for the CA; digitalSignature for a TSA.
  const usage = { ca: [0x06, 1], timestamping: [0x80, 7] }[role]
  const keyUsage = new BitString({ valueHex: new Uint8Array([usage[0]!]).buffer, unusedBits: usage[1]! })
  list.push(new Extension({ extnID: id_KeyUsage, critical: true, extnValue: keyUsage.toBER(false) }))
  if (role === 'timestamping') {
    // RFC 3161 2.3: a TSA's certificate has exactly id-kp-timeStamping, marked critical.
    const eku = new ExtKeyUsage({ keyPurposes: [OID_TIME_STAMPING] })
    list.push(new Extension({ extnID: id_ExtKeyUsage, critical: true, extnValue: eku.toSchema().toBER(false) }))
  }
  list.push(
    new Extension({
      extnID: id_SubjectKeyIdentifier,
      extnValue: new OctetString({ valueHex: new Uint8Array(keyId).buffer }).toBER(false),
    }),
  )
  const authority = issuer && authorityKeyIdentifier(issuer)
  if (authority) list.push(authority)
  return list
}

/** The authority key identifier naming `issuer`'s subject key identifier; undefined when it has none. */
export function authorityKeyIdentifier(issuer: Certificate): Extension | undefined {
  const issuerKeyId = issuer.extensions?.find((e) => e.extnID === id_SubjectKeyIdentifier)?.parsedValue as
    | OctetString
    | undefined
  if (!issuerKeyId) return undefined
  const authority = new AuthorityKeyIdentifier({
    keyIdentifier: new OctetString({ valueHex: new Uint8Array(issuerKeyId.valueBlock.valueHexView).buffer }),
  })
  return new Extension({ extnID: id_AuthorityKeyIdentifier, extnValue: authority.toSchema().toBER(false) })
}

/** 16 random bytes with the high bit clear: a positive INTEGER without padding. */
export function serialNumber(): ArrayBuffer {
  const bytes = crypto.getRandomValues(new Uint8Array(16))
  bytes[0] = (bytes[0]! & 0x7f) | 0x01
  return bytes.buffer
}
