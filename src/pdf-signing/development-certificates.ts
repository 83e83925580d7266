// The embedded default's signing identity (issue-certificate.ts): made once under DATA_DIR/pdf-signing/ and reused,
// so that `npm start` signs PDFs out of the box and what it signed keeps verifying across restarts. Every name says
// "development, untrusted": no reader trusts the CA unless someone adds it, and nobody should. Production takes its
// key from the PKCS#11 token.
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { certificatePem, parsePemCertificates, toPem } from './certificates.ts'
import { EC_KEY, type Issued, identityOf, makeIdentity, type SigningIdentity } from './issue-certificate.ts'

/** Loads the development identity from `dataDir`, making it the first time. */
export async function developmentIdentity(dataDir: string): Promise<SigningIdentity> {
  const dir = join(dataDir, 'pdf-signing')
  const loaded = await load(dir).catch(() => undefined)
  if (loaded) return loaded
  await mkdir(dir, { recursive: true })
  const { ca, signing, timestamping } = await makeIdentity()
  // Written beside and renamed, the CA last: a directory with the CA holds the whole identity.
  for (const [name, issued] of [
    ['signing', signing],
    ['timestamping', timestamping],
    ['ca', ca],
  ] as const) {
    await writeSecret(join(dir, `${name}-key.pem`), toPem('PRIVATE KEY', await exportKey(issued.privateKey)))
    await writeFile(join(dir, `${name}.tmp`), certificatePem(issued.certificate))
    await rename(join(dir, `${name}.tmp`), join(dir, `${name}.pem`))
  }
  return identityOf(ca, signing, timestamping)
}

async function load(dir: string): Promise<SigningIdentity> {
  const read = async (name: string): Promise<Issued> => ({
    certificate: parsePemCertificates(await readFile(join(dir, `${name}.pem`), 'utf8'))[0]!,
    privateKey: await importKey(await readFile(join(dir, `${name}-key.pem`), 'utf8')),
  })
  const ca = await read('ca')
  return identityOf(ca, await read('signing'), await read('timestamping'))
}

async function exportKey(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.exportKey('pkcs8', key))
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64')
  return crypto.subtle.importKey('pkcs8', der, EC_KEY, false, ['sign'])
}

async function writeSecret(path: string, text: string): Promise<void> {
  await writeFile(`${path}.tmp`, text, { mode: 0o600 })
  await chmod(`${path}.tmp`, 0o600)
  await rename(`${path}.tmp`, path)
}
