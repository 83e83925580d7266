// A signer's own key and the request (PKCS#10) that proves the service's CA which key it certifies: the service never
// holds a signer's private key, and signs nothing of the document itself. P-256 on WebCrypto, so a browser or an
// Electron app makes its key the same way as the CLI (which keeps it in its configuration directory, 0600).
import { CertificationRequest } from 'pkijs'
import { EC_SIGNING_KEY } from './signing-key.ts'
import { distinguishedName } from './x509-name.ts'

/** A fresh P-256 key pair; extractable, so that a client can keep it (its private half stays with the client). */
export async function makeSignerKey(): Promise<CryptoKeyPair> {
  return (await crypto.subtle.generateKey(EC_SIGNING_KEY, true, ['sign', 'verify'])) as CryptoKeyPair
}

/**
 * The PKCS#10 request (DER) for `keys`, signed with its private key (proof of possession). Its subject says only what
 * the client asks for; the certificate's subject is the account's verified e-mail, whatever the request says.
 */
export async function certificationRequest(keys: CryptoKeyPair, email: string): Promise<Uint8Array> {
  const request = new CertificationRequest()
  request.version = 0
  request.subject = distinguishedName([['2.5.4.3', email]])
  await request.subjectPublicKeyInfo.importKey(keys.publicKey)
  await request.sign(keys.privateKey, 'SHA-256')
  return new Uint8Array(request.toSchema().toBER(false))
}
