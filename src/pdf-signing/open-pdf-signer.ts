// The service's PDF signer as configured: the development identity under DATA_DIR (development-certificates.ts),
// or a P-256 key on the PKCS#11 token with its certificate chain from PEM. A configuration that cannot sign (no such
// key, a certificate that is expired, not yet valid or for another key) throws ConfigError naming the variable, so
// the service refuses to start (exit 78) instead of answering every signature with an error.
import { resolve } from 'node:path'
import { type CmsSigner, type DocumentSigningKey, ecdsaDer } from '@docanchor/client'
import type { Certificate } from 'pkijs'
import { type Config, ConfigError, type PdfSignerConfig, type TimestampConfig } from '../config.ts'
import { Pkcs11Key, TokenCallError } from '../relayer/signers/pkcs11-key.ts'
import { parsePemCertificates, publicKeyBits, validity } from './certificates.ts'
import { developmentIdentity } from './development-certificates.ts'
import { developmentTimestampAuthority } from './development-timestamp-authority.ts'
import { httpTimestampAuthorities, type TimestampEvents } from './http-timestamp-authorities.ts'
import { PdfSigner } from './pdf-signer.ts'

/** DER of the object identifier 1.2.840.10045.3.1.7 (P-256), as CKA_EC_PARAMS carries it. */
const P256_OID_DER = '06082a8648ce3d030107'

export interface OpenedPdfSigner {
  signer: PdfSigner
  /** When the signing certificate stops being valid: what the expiry alert watches. */
  notAfter: Date
  close(): void
}

export interface PdfSignerEvents extends TimestampEvents {
  /** The token key left rotation or came back (PKCS#11 only). */
  onKeyHealth(up: boolean, reason: string): void
}

export async function openPdfSigner(config: Config, events: PdfSignerEvents): Promise<OpenedPdfSigner> {
  const { signer: settings, timestamps } = config.pdfSigning
  if (settings.kind === 'development') {
    const identity = await developmentIdentity(resolve(config.dataDir))
    const authority =
      timestamps.urls.length > 0 ? http(timestamps, events) : developmentTimestampAuthority(identity.timestamping)
    return {
      signer: new PdfSigner(identity.signing, authority),
      notAfter: validity(identity.signing.certificates[0]!).notAfter,
      close: () => {},
    }
  }
  const { cms, key } = await tokenSigner(settings, events)
  return {
    signer: new PdfSigner(cms, http(timestamps, events)),
    notAfter: validity(cms.certificates[0]!).notAfter,
    close: () => key.close(),
  }
}

function http(timestamps: TimestampConfig, events: TimestampEvents) {
  return httpTimestampAuthorities(timestamps, events)
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
  const { key } = opened
  try {
    if (opened.ecParams.toLowerCase() !== P256_OID_DER) {
      throw configProblem('PDF_SIGNING_KEY_LABEL', `the key "${settings.keyLabel}" is not a P-256 key`)
    }
    const point = opened.ecPoint.toLowerCase().replace(/^0441/, '')
    if (Buffer.from(publicKeyBits(certificates[0]!)).toString('hex') !== point) {
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
    keyType: 'ec',
    async sign(data) {
      const hash = new Uint8Array(await crypto.subtle.digest('SHA-256', data as Uint8Array<ArrayBuffer>))
      return ecdsaDer(new Uint8Array(Buffer.from(await key.sign(Buffer.from(hash).toString('hex')), 'hex')))
    },
  }
  return { cms: { key: signingKey, certificates }, key }
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
    const which = index === 0 ? 'the signing certificate' : `certificate ${index + 1} of the chain`
    if (notAfter <= now)
      throw configProblem('PDF_SIGNING_CERTIFICATES', `${which} expired on ${notAfter.toISOString()}`)
    if (notBefore > now) {
      throw configProblem('PDF_SIGNING_CERTIFICATES', `${which} is not valid before ${notBefore.toISOString()}`)
    }
  }
  return certificates
}

const configProblem = (variable: string, message: string) =>
  new ConfigError(`Invalid configuration:\n  ${variable}: ${message}`)
