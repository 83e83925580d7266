// The service's signer CA as configured: the development CA under DATA_DIR (development-certificates.ts), or a P-256
// or RSA key on the PKCS#11 token with its CA certificate chain from PEM. A configuration that cannot certify (no such
// key, a certificate that is expired, not yet valid, for another key or not a CA's) throws ConfigError naming the
// variable, so the service refuses to start (exit 78) instead of answering every request with an error.
import { resolve } from 'node:path'
import { type CmsSigner, type DocumentSigningKey, ecdsaDer } from '@docanchor/client'
import { Integer } from 'asn1js'
import { type BasicConstraints, type Certificate, id_BasicConstraints, RSAPublicKey } from 'pkijs'
import { ConfigError } from '../config/env-fields.ts'
import type { Config } from '../config/load-config.ts'
import type { PdfSignerConfig, TimestampConfig } from '../config/pdf-signing-settings.ts'
import { Pkcs11Key, TokenCallError } from '../pkcs11/pkcs11-key.ts'
import type { TokenPublicKey } from '../pkcs11/pkcs11-token-protocol.ts'
import { parsePemCertificates, publicKeyBits, validity } from './certificates.ts'
import { developmentIdentity } from './development-certificates.ts'
import { developmentTimestampAuthority } from './development-timestamp-authority.ts'
import { SigningKeyUnavailableError } from './errors.ts'
import { httpTimestampAuthorities, type TimestampEvents } from './http-timestamp-authorities.ts'
import { SignerAuthority } from './signer-authority.ts'
import { statusUrlsOf } from './signer-certificate.ts'

/** DER of the object identifier 1.2.840.10045.3.1.7 (P-256), as CKA_EC_PARAMS carries it. */
const P256_OID_DER = '06082a8648ce3d030107'
/** Smallest RSA modulus taken, in bits: what ETSI TS 119 312 and the CA/Browser Forum still accept. */
const MIN_RSA_BITS = 2048

export interface OpenedSignerAuthority {
  authority: SignerAuthority
  /** When the CA certificate stops being valid: what the expiry alert watches. */
  notAfter: Date
  close(): void
}

export interface PdfSignerEvents extends TimestampEvents {
  /** The token key left rotation or came back (PKCS#11 only). */
  onKeyHealth(up: boolean, reason: string): void
}

export async function openSignerAuthority(config: Config, events: PdfSignerEvents): Promise<OpenedSignerAuthority> {
  const { signer: settings, timestamps } = config.pdfSigning
  if (settings.kind === 'development') {
    const identity = await developmentIdentity(resolve(config.dataDir))
    const authority =
      timestamps.urls.length > 0 ? http(timestamps, events) : developmentTimestampAuthority(identity.timestamping)
    return {
      authority: new SignerAuthority(identity.ca, authority, statusUrlsOf(config.publicUrl)),
      notAfter: validity(identity.ca.certificates[0]!).notAfter,
      close: () => {},
    }
  }
  const { cms, key } = await tokenSigner(settings, events)
  return {
    authority: new SignerAuthority(cms, http(timestamps, events), statusUrlsOf(config.publicUrl)),
    notAfter: validity(cms.certificates[0]!).notAfter,
    close: () => key.close(),
  }
}

function http(timestamps: TimestampConfig, events: TimestampEvents) {
  let roots: Certificate[] = []
  if (timestamps.trustedCertificatesPem !== undefined) {
    try {
      roots = parsePemCertificates(timestamps.trustedCertificatesPem)
    } catch (error) {
      throw configProblem('TSA_TRUSTED_CERTIFICATES', `not PEM certificates: ${(error as Error).message}`)
    }
    if (roots.length === 0) throw configProblem('TSA_TRUSTED_CERTIFICATES', 'the file holds no certificate')
  }
  return httpTimestampAuthorities({ ...timestamps, roots }, events)
}

async function tokenSigner(
  settings: Extract<PdfSignerConfig, { kind: 'pkcs11' }>,
  events: PdfSignerEvents,
): Promise<{ cms: CmsSigner; key: Pkcs11Key }> {
  const certificates = certificatesOf(settings.certificatesPem)
  const opened = await Pkcs11Key.open(
    { ...settings.token, keyLabel: settings.keyLabel },
    { onHealth: (up, reason) => events.onKeyHealth(up, reason) },
  ).catch((error: unknown) => {
    if (error instanceof TokenCallError && error.variable) {
      // The token process names the relayer's variable for a missing key; here the label is the PDF signer's.
      const variable = error.variable === 'PKCS11_KEY_LABELS' ? 'PDF_SIGNING_KEY_LABEL' : error.variable
      throw configProblem(variable, error.message)
    }
    throw error
  })
  const { key, publicKey } = opened
  try {
    const tokenKey = publicKeyHex(publicKey, settings.keyLabel)
    if (Buffer.from(publicKeyBits(certificates[0]!)).toString('hex') !== tokenKey.certified) {
      throw configProblem(
        'PDF_SIGNING_CERTIFICATES',
        `the first certificate is not for the key "${settings.keyLabel}" (PDF_SIGNING_KEY_LABEL)`,
      )
    }
  } catch (error) {
    key.close()
    throw error
  }
  const signingKey: DocumentSigningKey = {
    keyType: publicKey.type,
    async sign(data) {
      const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>))
      const signed = await key.sign(Buffer.from(hash).toString('hex')).catch((error: unknown) => {
        throw error instanceof TokenCallError ? new SigningKeyUnavailableError(error) : error
      })
      const signature = new Uint8Array(Buffer.from(signed, 'hex'))
      return publicKey.type === 'ec' ? ecdsaDer(signature) : signature
    },
  }
  return { cms: { key: signingKey, certificates }, key }
}

/**
 * The token's public key as a certificate's subjectPublicKey holds it (the uncompressed point for P-256, the DER of
 * RSAPublicKey for RSA), for comparing with the certificate; a key of another kind or size is refused.
 */
function publicKeyHex(publicKey: TokenPublicKey, label: string): { certified: string } {
  if (publicKey.type === 'ec') {
    if (publicKey.ecParams.toLowerCase() !== P256_OID_DER) {
      throw configProblem('PDF_SIGNING_KEY_LABEL', `the key "${label}" is neither a P-256 nor an RSA key`)
    }
    // CKA_EC_POINT is the point wrapped in a DER OCTET STRING (04 41 …).
    return { certified: publicKey.ecPoint.toLowerCase().replace(/^0441/, '') }
  }
  const modulus = new Integer({ valueHex: unsignedInteger(publicKey.modulus) })
  const bits = (publicKey.modulus.replace(/^(00)+/, '').length / 2) * 8
  if (bits < MIN_RSA_BITS) {
    throw configProblem('PDF_SIGNING_KEY_LABEL', `the RSA key "${label}" has ${bits} bits; at least ${MIN_RSA_BITS}`)
  }
  const exponent = new Integer({ valueHex: unsignedInteger(publicKey.exponent) })
  const der = new RSAPublicKey({ modulus, publicExponent: exponent }).toSchema().toBER(false)
  return { certified: Buffer.from(der).toString('hex') }
}

/** An unsigned big-endian number (hex) as a DER INTEGER's content: a leading zero byte when its top bit is set. */
function unsignedInteger(hex: string): ArrayBuffer {
  const bytes = Buffer.from(hex.replace(/^(00)+/, ''), 'hex')
  return new Uint8Array((bytes[0] ?? 0) & 0x80 ? Buffer.concat([Buffer.from([0]), bytes]) : bytes).buffer
}

/** The PEM chain, each certificate valid now. */
function certificatesOf(pem: string, now = new Date()): Certificate[] {
  let certificates: Certificate[]
  try {
    certificates = parsePemCertificates(pem)
  } catch (error) {
    throw configProblem('PDF_SIGNING_CERTIFICATES', `not PEM certificates: ${(error as Error).message}`)
  }
  for (const [index, certificate] of certificates.entries()) {
    const { notBefore, notAfter } = validity(certificate)
    const which = index === 0 ? 'the CA certificate' : `certificate ${index + 1} of the chain`
    if (notAfter <= now)
      throw configProblem('PDF_SIGNING_CERTIFICATES', `${which} expired on ${notAfter.toISOString()}`)
    if (notBefore > now) {
      throw configProblem('PDF_SIGNING_CERTIFICATES', `${which} is not valid before ${notBefore.toISOString()}`)
    }
  }
  if (!isCa(certificates[0]!)) {
    throw configProblem(
      'PDF_SIGNING_CERTIFICATES',
      'the first certificate is not a CA’s (basicConstraints cA and keyCertSign): the key certifies signers',
    )
  }
  return certificates
}

function isCa(certificate: Certificate): boolean {
  const basic = certificate.extensions?.find((e) => e.extnID === id_BasicConstraints)?.parsedValue as
    | BasicConstraints
    | undefined
  return basic?.cA === true
}

const configProblem = (variable: string, message: string) =>
  new ConfigError(`Invalid configuration:\n  ${variable}: ${message}`)
