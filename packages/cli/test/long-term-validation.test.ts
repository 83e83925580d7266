// A file `anchor sign` made keeps verifying long after its certificates expired: its signature is followed by a DSS
// and a document timestamp (PAdES B-LTA), `anchor extend` adds the next ones, and both `anchor verify` (its own
// process, the clock moved by Debian's faketime past every certificate's end) and iText 5's LtvVerifier (a validator
// not written here, offline, under faketime too) accept it; tampered with, both refuse it.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { readSignedPdf } from '@docanchor/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../../bench/soak/free-port.ts'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { runAnchor } from './helpers/run-anchor.ts'

const run = promisify(execFile)
const ITEXT_CLASSPATH = ['itext5', 'bcprov', 'bcpkix', 'bcutil'].map((jar) => `/usr/share/java/${jar}.jar`)
const YEAR_MS = 365.25 * 24 * 3600 * 1000

let t: TestApp
let url: string
let dir: string
let token: string
let caFile: string

const file = (name: string) => join(dir, name)
const env = () => ({ XDG_CONFIG_HOME: file('config'), ANCHOR_URL: url, ANCHOR_TOKEN: token })
const anchor = (argv: string[]) => runAnchor(argv, env())

/** `anchor verify` in its own process, its clock at `at` (faketime). */
async function verifyAt(at: Date, pdf: string) {
  const stamp = at.toISOString().replace('T', ' ').slice(0, 19)
  return run('faketime', [stamp, process.execPath, 'packages/cli/bin/anchor.js', 'verify', pdf], {
    env: { ...process.env, ...env(), ANCHOR_TOKEN: '' },
  }).catch((error: { code: number; stdout: string; stderr: string }) => error)
}

/** iText's LtvVerifier on `pdf`, trusting the service's CA, its clock at `at`. */
async function itextAt(at: Date, pdf: string) {
  const stamp = at.toISOString().replace('T', ' ').slice(0, 19)
  const classpath = [...ITEXT_CLASSPATH, dir].join(':')
  return run('faketime', [stamp, 'java', '-cp', classpath, 'LtvCheck', pdf, caFile]).catch(
    (error: { code: number; stdout: string; stderr: string }) => error,
  )
}

beforeAll(async () => {
  // The certificates name the service's OCSP responder and CRL by its public URL: where it listens.
  const port = await freePort()
  t = await createTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } })
  url = await t.app.listen({ port, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-ltv-'))
  token = (await signInTestUser(t, 'ada@example.com', 'google')).token
  await writeFile(file('contract.pdf'), await pdfLibDocument())
  const info = (await t.app.inject({ url: '/api/info' })).json() as { pdfSigning: { certificates: string[] } }
  caFile = file('ca.pem')
  await writeFile(caFile, info.pdfSigning.certificates[0]!)
  await run('javac', ['-cp', ITEXT_CLASSPATH.join(':'), '-d', dir, 'packages/cli/test/helpers/LtvCheck.java'])
}, 120_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor sign and anchor extend', () => {
  it('sign makes a B-LTA file; extend adds validation data and the next document timestamp', async () => {
    const signed = await anchor(['sign', file('contract.pdf'), '-o', file('signed.pdf'), '--name', 'Ada Lovelace'])
    expect(signed.stderr).toBe('')
    expect(signed.stdout).not.toContain('warning')
    const extended = await anchor(['extend', file('signed.pdf'), '-o', file('extended.pdf')])
    expect(extended.stderr).toBe('')
    expect(extended.stdout).toContain(
      `Extended ${file('signed.pdf')} -> ${file('extended.pdf')}: validation data for 1 PDF signature and a document ` +
        'timestamp (2 in all)',
    )
    expect(extended.code).toBe(0)
    const read = await readSignedPdf(new Uint8Array(await readFile(file('extended.pdf'))))
    expect(read.pdfSignatures.map((field) => [field.revision, field.subFilter])).toEqual([
      [1, 'ETSI.CAdES.detached'],
      [3, 'ETSI.RFC3161'],
      [5, 'ETSI.RFC3161'],
    ])
    const verified = await anchor(['verify', file('extended.pdf')])
    expect(verified.stdout).toMatch(/long-term validation B-LTA: .* \(not revoked as of .*, by OCSP\)/)
    expect(verified.stdout).toMatch(
      /document timestamp .* by Document Anchoring Service development TSA \(untrusted\), authority trusted/,
    )
    expect(verified.stdout).toMatch(
      /the newest timestamp's certificate is valid until 20\d\d-.*: run `anchor extend` on the file before then/,
    )
    expect(verified.stdout).toMatch(/Verified: the signature is valid\.\n$/)
  })

  it('refuses to extend a file without a signature, or over its input', async () => {
    const unsigned = await anchor(['extend', file('contract.pdf'), '-o', file('nothing.pdf')])
    expect(unsigned.code).toBe(2)
    expect(unsigned.stderr).toContain('the PDF has no signature whose validation data could be added')
    const over = await anchor(['extend', file('signed.pdf'), '-o', file('signed.pdf')])
    expect(over.code).toBe(2)
    expect(over.stderr).toContain('is the input itself')
    expect(over.stderr).toContain('nothing was extended')
  })
})

describe('a B-LTA file years later', () => {
  it('verifies in anchor verify after every certificate in it expired, offline of any responder', async () => {
    // The development CA and TSA are valid for ten years, the signer's certificate for one.
    const later = new Date(Date.now() + 11 * YEAR_MS)
    const verified = await verifyAt(later, file('extended.pdf'))
    expect(verified.stdout).toContain('long-term validation B-LTA')
    expect(verified.stdout).toContain("the newest timestamp's certificate expired on")
    expect(verified.stdout).toMatch(/Verified: the signature is valid\.\n$/)
  })

  it('is accepted by iText’s LtvVerifier now and after the signer’s certificate expired, and refused tampered', async () => {
    const now = await itextAt(new Date(), file('extended.pdf'))
    expect(now.stderr).toBe('')
    expect(now.stdout).toContain('LTV OK')
    // Past the signer's certificate (a year), within the timestamp authority's: the DSS carries its status.
    const later = await itextAt(new Date(Date.now() + 2 * YEAR_MS), file('extended.pdf'))
    expect(later.stderr).toBe('')
    expect(later.stdout).toMatch(/OCSPVerifier|CRLVerifier/)
    expect(later.stdout).toContain('LTV OK')
    const bytes = new Uint8Array(await readFile(file('extended.pdf')))
    const tampered = bytes.slice()
    // A byte of the page's content stream, inside the signed part: the file still parses, the hash no longer matches.
    const at = Buffer.from(bytes).indexOf('stream\n') + 10
    tampered[at] = tampered[at]! ^ 1
    await writeFile(file('tampered.pdf'), tampered)
    const refused = await itextAt(new Date(), file('tampered.pdf'))
    expect(refused.stdout).not.toContain('LTV OK')
  })
})
