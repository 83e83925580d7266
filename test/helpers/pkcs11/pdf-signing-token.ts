// A PDF signing key on a SoftHSM2 token, as an operator provisions one: a P-256 (or RSA) key pair made on the token by
// pkcs11-tool, its public key read back, and a certificate for it from a CA of the test's own (a real operator's CA
// signs a CSR instead), written as the PEM chain PDF_SIGNING_CERTIFICATES names.
import { execFileSync } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { certificatePem } from '../../../src/pdf-signing/certificates.ts'
import { certify, EC_KEY, issueCertificate } from '../../../src/pdf-signing/issue-certificate.ts'
import { SOFTHSM_MODULE, type SoftHsmToken } from './softhsm.ts'

export interface ProvisionedPdfKey {
  /** The PEM file with the signing certificate first, then the CA. */
  certificatesFile: string
  caPem: string
  /** PDF_SIGNER, PDF_SIGNING_KEY_LABEL, PDF_SIGNING_CERTIFICATES and the token's PKCS11_* variables. */
  env: Record<string, string>
}

export async function provisionPdfSigningKey(
  token: SoftHsmToken,
  options: {
    label?: string
    /** Default: a P-256 key. */
    rsaBits?: number
    validFrom?: Date
    validForMs?: number
    certificateFor?: 'the key' | 'another key'
  } = {},
): Promise<ProvisionedPdfKey> {
  const label = options.label ?? 'pdf-signing'
  token.addKey(label, options.rsaBits ? `rsa:${options.rsaBits}` : 'EC:prime256v1')
  const algorithm = options.rsaBits ? { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' } : EC_KEY
  const publicKeyFile = join(token.dir, `${label}.pub.der`)
  execFileSync(
    'pkcs11-tool',
    [
      ...['--module', SOFTHSM_MODULE, '--token-label', token.tokenLabel, '--login', '--pin', token.pin],
      ...['--read-object', '--type', 'pubkey', '--label', label, '-o', publicKeyFile],
    ],
    { env: { ...process.env, ...token.env }, stdio: 'pipe' },
  )
  const ca = await issueCertificate({ name: 'Test PDF signing root CA', organization: 'Tests only', role: 'ca' })
  const publicKey =
    options.certificateFor === 'another key'
      ? ((await crypto.subtle.generateKey(EC_KEY, true, ['sign', 'verify'])) as CryptoKeyPair).publicKey
      : await crypto.subtle.importKey('spki', readFileSync(publicKeyFile), algorithm, true, ['verify'])
  const certificate = await certify(publicKey, {
    name: 'Test Document Anchoring Service signer CA',
    organization: 'Tests only',
    role: 'ca',
    issuer: ca,
    ...(options.validFrom && { validFrom: options.validFrom }),
    ...(options.validForMs && { validForMs: options.validForMs }),
  })
  const certificatesFile = join(token.dir, `${label}-chain.pem`)
  const caPem = certificatePem(ca.certificate)
  writeFileSync(certificatesFile, certificatePem(certificate) + caPem)
  return {
    certificatesFile,
    caPem,
    env: {
      ...token.env,
      PDF_SIGNER: 'pkcs11',
      PDF_SIGNING_KEY_LABEL: label,
      PDF_SIGNING_CERTIFICATES: certificatesFile,
      PKCS11_MODULE: SOFTHSM_MODULE,
      PKCS11_TOKEN_LABEL: token.tokenLabel,
      PKCS11_PIN: token.pin,
    },
  }
}
