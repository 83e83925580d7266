// PDFs signed by other tools, and poppler's pdfsig to judge signatures: @signpdf (the common Node PAdES signer) and
// poppler's own `pdfsig -add-signature`, with a throwaway self-signed certificate. Node only.

import { execFile } from 'node:child_process'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { plainAddPlaceholder } from '@signpdf/placeholder-plain'
import { P12Signer } from '@signpdf/signer-p12'
import signpdfModule from '@signpdf/signpdf'
import forge from 'node-forge'
import { withTempDir } from './fixtures.ts'

const run = promisify(execFile)
const P12_PASSWORD = 'other-tool'
export const OTHER_SIGNER = 'Other Tool Signer'

let p12: Promise<Buffer> | undefined

/** A self-signed certificate and its key as a PKCS#12 file, made once per run. */
function otherToolP12(): Promise<Buffer> {
  p12 ??= Promise.resolve().then(() => {
    const keys = forge.pki.rsa.generateKeyPair(2048)
    const cert = forge.pki.createCertificate()
    cert.publicKey = keys.publicKey
    cert.serialNumber = '01'
    cert.validity.notBefore = new Date(Date.now() - 24 * 3600 * 1000)
    cert.validity.notAfter = new Date(Date.now() + 365 * 24 * 3600 * 1000)
    const name = [{ name: 'commonName', value: OTHER_SIGNER }]
    cert.setSubject(name)
    cert.setIssuer(name)
    cert.sign(keys.privateKey, forge.md.sha256.create())
    const asn1 = forge.pkcs12.toPkcs12Asn1(keys.privateKey, [cert], P12_PASSWORD, { algorithm: '3des' })
    return Buffer.from(forge.asn1.toDer(asn1).getBytes(), 'binary')
  })
  return p12
}

/** `pdf` signed by @signpdf (adbe.pkcs7.detached), whose startxref points one byte before its `xref`. */
export async function signedBySignpdf(pdf: Uint8Array): Promise<Uint8Array> {
  // The package is CommonJS: its `sign` sits on the default export under Node's ESM loader.
  const signpdf = ((signpdfModule as unknown as { default?: unknown }).default ?? signpdfModule) as {
    sign(pdf: Buffer, signer: P12Signer): Promise<Buffer>
  }
  const withPlaceholder = plainAddPlaceholder({
    pdfBuffer: Buffer.from(pdf),
    reason: 'Approved',
    contactInfo: 'other@example.com',
    name: OTHER_SIGNER,
    location: 'Elsewhere',
  })
  const signer = new P12Signer(await otherToolP12(), { passphrase: P12_PASSWORD })
  return new Uint8Array(await signpdf.sign(withPlaceholder, signer))
}

/** `pdf` signed by poppler's `pdfsig -add-signature`, from an NSS database holding the same certificate. */
export function signedByPoppler(pdf: Uint8Array): Promise<Uint8Array> {
  return withTempDir(async (dir) => {
    const nss = `sql:${join(dir, 'nss')}`
    await run('mkdir', [join(dir, 'nss')])
    await run('certutil', ['-N', '-d', nss, '--empty-password'])
    await writeFile(join(dir, 'signer.p12'), await otherToolP12())
    await run('pk12util', ['-i', join(dir, 'signer.p12'), '-d', nss, '-W', P12_PASSWORD])
    await writeFile(join(dir, 'in.pdf'), pdf)
    await run('pdfsig', [
      '-nssdir',
      nss,
      '-add-signature',
      '-nick',
      OTHER_SIGNER,
      join(dir, 'in.pdf'),
      join(dir, 'out.pdf'),
    ])
    return new Uint8Array(await readFile(join(dir, 'out.pdf')))
  })
}

export interface PdfsigSignature {
  field: string
  /** "Signature is Valid.", "Digest Mismatch.", ... */
  validation: string
  ranges: string
}

/** What poppler's pdfsig says of every signature in `pdf` (`nssdir`: a database whose CAs it trusts). */
export function pdfsigReport(
  pdf: Uint8Array,
  nssdir?: string,
): Promise<{ text: string; signatures: PdfsigSignature[] }> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const args = [...(nssdir ? ['-nssdir', nssdir] : []), join(dir, 'f.pdf')]
    const { stdout } = await run('pdfsig', args).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
    const signatures = stdout
      .split(/^Signature #\d+:$/m)
      .slice(1)
      .map((block) => ({
        field: /Signature Field Name: (.*)/.exec(block)?.[1] ?? '',
        validation: /Signature Validation: (.*)/.exec(block)?.[1] ?? '',
        ranges: /Signed Ranges: (.*)/.exec(block)?.[1] ?? '',
      }))
    return { text: stdout, signatures }
  })
}
