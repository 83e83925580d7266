// The embedded default's CA and TSA (issue-certificate.ts): made once under DATA_DIR/pdf-signing/ and reused, so that
// `npm start` certifies signers and timestamps their PDF signatures out of the box, and what was signed keeps
// verifying across restarts. Every name says "development, untrusted": no reader trusts the CA unless someone adds
// it, and nobody should. Production takes the CA's key from the PKCS#11 token.
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { certificatePem, parsePemCertificates, toPem } from './certificates.ts'
import { EC_KEY, type Issued, identityOf, makeIdentity, type SigningIdentity } from './issue-certificate.ts'

/**
 * Loads the development identity from `dataDir`, making it the first time. Made whole in a directory of this process's
 * own and renamed into place in one step, so that instances starting together on one DATA_DIR all end up with the one
 * identity that won the rename, never with one's key beside another's certificate.
 */
export async function developmentIdentity(dataDir: string): Promise<SigningIdentity> {
  const dir = join(dataDir, 'pdf-signing')
  const loaded = await load(dir).catch(() => undefined)
  if (loaded) return loaded
  await mkdir(dataDir, { recursive: true })
  const draft = await mkdtemp(join(dataDir, 'pdf-signing-draft-'))
  try {
    const { ca, timestamping } = await makeIdentity()
    for (const [name, issued] of [
      ['timestamping', timestamping],
      ['ca', ca],
    ] as const) {
      const key = toPem('PRIVATE KEY', await exportKey(issued.privateKey))
      await writeFile(join(draft, `${name}-key.pem`), key, { mode: 0o600 })
      await writeFile(join(draft, `${name}.pem`), certificatePem(issued.certificate))
    }
    await rename(draft, dir)
    return identityOf(ca, timestamping)
  } catch (error) {
    await rm(draft, { recursive: true, force: true })
    const code = (error as NodeJS.ErrnoException).code
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw error
    // Another instance put its identity in place first: that one is everybody's.
    return load(dir).catch(() => {
      throw new Error(`${dir} holds an incomplete development signing identity: remove the directory and start again`)
    })
  }
}

async function load(dir: string): Promise<SigningIdentity> {
  const read = async (name: string): Promise<Issued> => ({
    certificate: parsePemCertificates(await readFile(join(dir, `${name}.pem`), 'utf8'))[0]!,
    privateKey: await importKey(await readFile(join(dir, `${name}-key.pem`), 'utf8')),
  })
  return identityOf(await read('ca'), await read('timestamping'))
}

async function exportKey(key: CryptoKey): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.exportKey('pkcs8', key))
}

async function importKey(pem: string): Promise<CryptoKey> {
  const der = Buffer.from(pem.replace(/-----[A-Z ]+-----/g, '').replace(/\s+/g, ''), 'base64')
  return crypto.subtle.importKey('pkcs8', der, EC_KEY, false, ['sign'])
}
