// The signer's own key and its certificate from the service's CA (issue 37): the key is made on this device and
// never leaves it (signer-key.pem, PKCS#8, 0600 in the configuration directory), the service certifies it under the
// login's verified e-mail (signer-certificates.json, one a service and e-mail), and the certificate is asked for again
// when it is missing, for another e-mail, or within a day of its end.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import {
  type CmsSigner,
  certificateOf,
  certificationRequest,
  EC_SIGNING_KEY,
  makeSignerKey,
  webCryptoSigningKey,
} from '@docanchor/client'
import type { ServiceClient } from './service-client.ts'

interface StoredCertificate {
  email: string
  /** DER, base64: the certificate, then the issuing CA up to the root. */
  certificates: string[]
  notAfter: string
}

const RENEW_BEFORE_MS = 24 * 3600 * 1000
const keyFile = (configDir: string) => join(configDir, 'signer-key.pem')
const certificatesFile = (configDir: string) => join(configDir, 'signer-certificates.json')

/** The key and certificate chain the login signs with on `service`, asking the service for a certificate if need be. */
export async function signerIdentity(
  configDir: string,
  service: ServiceClient,
  email: string | undefined,
): Promise<CmsSigner> {
  const keys = await signerKey(configDir)
  const stored = await readCertificates(configDir)
  let current = stored[service.baseUrl]
  const fresh =
    current &&
    (email === undefined || current.email === email) &&
    Date.parse(current.notAfter) - Date.now() > RENEW_BEFORE_MS
  if (!fresh) {
    const issued = await service.signerCertificate(await certificationRequest(keys, email ?? 'anchor signer'))
    current = { email: issued.email, certificates: [issued.certificate, ...issued.chain], notAfter: issued.notAfter }
    await writePrivately(
      certificatesFile(configDir),
      `${JSON.stringify({ ...stored, [service.baseUrl]: current }, null, 2)}\n`,
    )
  }
  return {
    key: webCryptoSigningKey(keys.privateKey),
    certificates: current!.certificates.map((der) => certificateOf(new Uint8Array(Buffer.from(der, 'base64')))),
  }
}

/** This device's key pair, made and kept the first time. */
async function signerKey(configDir: string): Promise<CryptoKeyPair> {
  try {
    const pem = await readFile(keyFile(configDir), 'utf8')
    const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64')
    const privateKey = await crypto.subtle.importKey('pkcs8', der, EC_SIGNING_KEY, true, ['sign'])
    // The public half, for the certificate request, from the private key's JWK (x and y are in it).
    const { d: _, key_ops: __, ...jwk } = await crypto.subtle.exportKey('jwk', privateKey)
    const publicKey = await crypto.subtle.importKey('jwk', jwk, EC_SIGNING_KEY, true, ['verify'])
    return { privateKey, publicKey }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const keys = await makeSignerKey()
  const der = Buffer.from(await crypto.subtle.exportKey('pkcs8', keys.privateKey)).toString('base64')
  const lines = der.match(/.{1,64}/g) ?? []
  await writePrivately(
    keyFile(configDir),
    `-----BEGIN PRIVATE KEY-----\n${lines.join('\n')}\n-----END PRIVATE KEY-----\n`,
  )
  return keys
}

async function readCertificates(configDir: string): Promise<Record<string, StoredCertificate>> {
  try {
    return JSON.parse(await readFile(certificatesFile(configDir), 'utf8')) as Record<string, StoredCertificate>
  } catch {
    return {}
  }
}

/** Written 0600 from the start (chmod in case a umask widened it) and renamed into place. */
async function writePrivately(file: string, text: string): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true, mode: 0o700 })
  const temp = `${file}.${process.pid}.tmp`
  await writeFile(temp, text, { mode: 0o600 })
  await chmod(temp, 0o600)
  await rename(temp, file)
}
