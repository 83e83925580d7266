// X.509 certificates as the PDF signer handles them: PEM in and out, validity, and the key a certificate is for.

import { certificateDer, certificateOf, pemCertificates } from '@docanchor/client'
import type { Certificate } from 'pkijs'

/** Every certificate in a PEM text, in order; throws when there is none or one does not parse. */
export function parsePemCertificates(pem: string): Certificate[] {
  const certificates = pemCertificates(pem).map(certificateOf)
  if (certificates.length === 0) throw new Error('no PEM certificate in it')
  return certificates
}

export function toPem(label: 'CERTIFICATE' | 'PRIVATE KEY', der: Uint8Array): string {
  const lines =
    Buffer.from(der)
      .toString('base64')
      .match(/.{1,64}/g) ?? []
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`
}

export function certificatePem(certificate: Certificate): string {
  return toPem('CERTIFICATE', certificateDer(certificate))
}

export function validity(certificate: Certificate): { notBefore: Date; notAfter: Date } {
  return { notBefore: certificate.notBefore.value, notAfter: certificate.notAfter.value }
}

/** The certificate's public key bits (an EC point, or an RSA public key's DER). */
export function publicKeyBits(certificate: Certificate): Uint8Array {
  return new Uint8Array(certificate.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)
}
