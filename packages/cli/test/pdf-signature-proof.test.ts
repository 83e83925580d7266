// Independent proof that `anchor sign` makes PDF signatures every reader validates: poppler's pdfsig says "Signature is
// Valid" for each (and "Certificate is Trusted" once the service's chain is in its NSS database), OpenSSL reads every
// /Contents as CMS with signingCertificateV2 and a timestamp token, qpdf finds no error, the QR codes decode from the
// rendered page, qpdf's view of each revision shows that no revision changed page content, and a signature another
// product made before keeps its validity.
import { execFile } from 'node:child_process'
import { createPrivateKey, createPublicKey } from 'node:crypto'
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { certificateOf, readSignedPdf } from '@docanchor/client'
import { fromBER } from 'asn1js'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../../bench/soak/free-port.ts'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { query } from '../../../test/relay/relay-helpers.ts'
import { qpdfCheck, scanQrCodes } from '../../client/test/pdf/fixtures.ts'
import { pdfsigReport, signedBySignpdf } from '../../client/test/pdf/other-signers.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { runAnchor } from './helpers/run-anchor.ts'

const run = promisify(execFile)

let t: TestApp
let url: string
let dir: string
let token: string
let nssdir: string
let twice: Uint8Array
/** The service's development CA (PEM): it certified the signers and the development TSA. */
let serviceCaPem: string

const anchor = (argv: string[]) =>
  runAnchor(argv, { XDG_CONFIG_HOME: join(dir, 'config'), ANCHOR_URL: url, ANCHOR_TOKEN: token })
const file = (name: string) => join(dir, name)
/** A /Contents' token without the zero padding after it (what `openssl ts -in` reads). */
const tokenOf = (contents: Uint8Array) => {
  const { offset } = fromBER(new Uint8Array(contents).buffer)
  return contents.subarray(0, offset)
}

beforeAll(async () => {
  // The public URL the certificates name (their OCSP responder, which pdfsig asks) is where the service listens.
  const port = await freePort()
  t = await createTestApp({ env: { PUBLIC_URL: `http://127.0.0.1:${port}` } })
  url = await t.app.listen({ port, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-pades-'))
  token = (await signInTestUser(t, 'ada@example.com', 'google')).token
  await writeFile(file('contract.pdf'), await pdfLibDocument({ pages: 2 }))
  for (const [from, to, name] of [
    ['contract.pdf', 'once.pdf', 'Ada Lovelace'],
    ['once.pdf', 'twice.pdf', 'Ada Lovelace, again'],
  ] as const) {
    const signed = await anchor(['sign', file(from), '-o', file(to), '--name', name])
    expect(signed.stderr).toBe('')
  }
  twice = new Uint8Array(await readFile(file('twice.pdf')))

  // The service's CA from /api/info in an NSS database, as docs/operations.md shows: trusted to issue signers; the
  // signer's certificate known too (poppler 22.12 otherwise reports a second signature by it as unknown).
  const info = (await t.app.inject({ url: '/api/info' })).json() as { pdfSigning: { certificates: string[] } }
  const [ca] = info.pdfSigning.certificates
  serviceCaPem = ca!
  const stored = JSON.parse(await readFile(join(dir, 'config', 'anchor', 'signer-certificates.json'), 'utf8'))
  const signer = (Object.values(stored)[0] as { certificates: string[] }).certificates[0]!
  nssdir = file('nss')
  await mkdir(nssdir)
  await writeFile(file('ca.pem'), ca!)
  await writeFile(file('signer.der'), Buffer.from(signer, 'base64'))
  await run('certutil', ['-N', '-d', `sql:${nssdir}`, '--empty-password'])
  await run('certutil', ['-A', '-d', `sql:${nssdir}`, '-n', 'anchor-ca', '-t', 'CT,C,C', '-i', file('ca.pem')])
  await run('certutil', ['-A', '-d', `sql:${nssdir}`, '-n', 'anchor-signer', '-t', ',,', '-i', file('signer.der')])
}, 120_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('a PDF signed twice with anchor sign', () => {
  it('shows two valid signatures in pdfsig by the account’s e-mail, trusted with the service’s CA', async () => {
    const untrusted = await pdfsigReport(twice)
    // Each signature is followed by its document timestamp (B-LTA), which poppler 22.12 lists but does not check:
    // OpenSSL checks those below.
    expect(untrusted.signatures.map((s) => [s.field, s.validation])).toEqual([
      ['Anchor signature 1', 'Signature is Valid.'],
      ['Timestamp_1', 'Signature has not yet been verified.'],
      ['Anchor signature 2', 'Signature is Valid.'],
      ['Timestamp_2', 'Signature has not yet been verified.'],
    ])
    expect(untrusted.text).toContain('Signature Type: ETSI.CAdES.detached')
    const trusted = await pdfsigReport(twice, `sql:${nssdir}`)
    expect(trusted.text.match(/Certificate Validation: (.*)/g)).toEqual([
      'Certificate Validation: Certificate is Trusted.',
      'Certificate Validation: Certificate is Trusted.',
    ])
    // The signer is the account, by its verified e-mail: never the service.
    const tsa =
      'Signer full Distinguished Name: CN=Document Anchoring Service development TSA (untrusted),' +
      'O=Development only: not a trusted identity,C=ZZ'
    expect(trusted.text.match(/Signer full Distinguished Name: (.*)/g)).toEqual([
      'Signer full Distinguished Name: CN=ada@example.com,E=ada@example.com',
      tsa,
      'Signer full Distinguished Name: CN=ada@example.com,E=ada@example.com',
      tsa,
    ])
    expect(trusted.text).not.toContain('Document Anchoring Service (')
  })

  it('carries in each /Contents a CMS with signingCertificateV2 and a signature timestamp token (OpenSSL)', async () => {
    await run('pdfsig', ['-dump', file('twice.pdf')], { cwd: dir })
    const dumps = (await readdir(dir)).filter((name) => /^twice\.pdf\.sig\d$/.test(name)).sort()
    expect(dumps).toEqual(['twice.pdf.sig0', 'twice.pdf.sig1', 'twice.pdf.sig2', 'twice.pdf.sig3'])
    // The signatures; sig1 and sig3 are the document timestamps, checked with `openssl ts` below.
    for (const dump of ['twice.pdf.sig0', 'twice.pdf.sig2']) {
      const { stdout } = await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', file(dump)])
      expect(stdout).toContain('object: id-smime-aa-signingCertificateV2 (1.2.840.113549.1.9.16.2.47)')
      expect(stdout).toContain('object: id-smime-aa-timeStampToken (1.2.840.113549.1.9.16.2.14)')
      expect(stdout).not.toContain('signingTime')
      // The token itself: a SignedData whose content is a TSTInfo.
      const parsed = await run('openssl', ['asn1parse', '-inform', 'DER', '-in', file(dump)])
      expect(parsed.stdout).toMatch(/OBJECT +:id-smime-ct-TSTInfo/)
    }
  })

  it('timestamps each document (B-LTA): `openssl ts -verify` accepts each token over its byte range', async () => {
    const read = await readSignedPdf(twice)
    const timestamps = read.pdfSignatures.filter((field) => field.subFilter === 'ETSI.RFC3161')
    expect(timestamps.map((field) => field.revision)).toEqual([3, 6])
    await writeFile(file('tsa-ca.pem'), serviceCaPem)
    for (const [i, field] of timestamps.entries()) {
      const [, a, b, c] = field.byteRange as [number, number, number, number]
      const covered = Buffer.concat([twice.subarray(0, a), twice.subarray(b, b + c)])
      await writeFile(file(`covered-${i}.bin`), covered)
      await writeFile(file(`token-${i}.der`), tokenOf(field.contents!))
      const verified = await run('openssl', [
        'ts',
        '-verify',
        '-data',
        file(`covered-${i}.bin`),
        '-in',
        file(`token-${i}.der`),
        '-token_in',
        '-CAfile',
        file('tsa-ca.pem'),
      ])
      expect(verified.stdout).toContain('Verification: OK')
    }
  })

  it('holds a DSS whose OCSP responses `openssl ocsp` verifies against the CA: the signer’s certificate is good', async () => {
    const read = await readSignedPdf(twice)
    const { certificates, ocspResponses } = read.validationData
    expect(certificates.length).toBeGreaterThanOrEqual(3)
    expect(ocspResponses.length).toBeGreaterThanOrEqual(1)
    const stored = JSON.parse(await readFile(join(dir, 'config', 'anchor', 'signer-certificates.json'), 'utf8'))
    const signer = (Object.values(stored)[0] as { certificates: string[] }).certificates[0]!
    await writeFile(file('signer-cert.der'), Buffer.from(signer, 'base64'))
    await run('openssl', ['x509', '-inform', 'DER', '-in', file('signer-cert.der'), '-out', file('signer-cert.pem')])
    await writeFile(file('ca-for-ocsp.pem'), serviceCaPem)
    const statuses: string[] = []
    for (const [i, response] of ocspResponses.entries()) {
      await writeFile(file(`ocsp-${i}.der`), response)
      const checked = await run('openssl', [
        'ocsp',
        '-respin',
        file(`ocsp-${i}.der`),
        '-issuer',
        file('ca-for-ocsp.pem'),
        '-CAfile',
        file('ca-for-ocsp.pem'),
        '-cert',
        file('signer-cert.pem'),
      ]).catch((error: { stdout: string; stderr: string }) => error)
      expect(checked.stderr).toContain('Response verify OK')
      statuses.push(...(checked.stdout.match(/signer-cert\.pem: (\w+)/g) ?? []))
    }
    expect(statuses).toContain('signer-cert.pem: good')
  })

  it('passes qpdf --check, and both QR codes decode from the rendered page', async () => {
    expect(await qpdfCheck(twice)).toMatch(/No syntax or stream encoding errors/)
    const read = await readSignedPdf(twice)
    const urls = read.revisions
      .findLast((revision) => revision.metadata)!
      .metadata!.signatures.map((signature) => signature.qr_url)
    expect((await scanQrCodes(twice, 1)).sort()).toEqual([...urls].sort())
  })

  it('never changes page content: each revision adds objects and rewrites only the catalog, the page and the form', async () => {
    const read = await readSignedPdf(twice)
    const views: Record<string, { value?: unknown; stream?: { dict: Record<string, unknown>; data?: string } }>[] = []
    for (const revision of read.revisions) {
      const prefix = file(`revision-${revision.index}.pdf`)
      await writeFile(prefix, twice.subarray(0, revision.end))
      const { stdout } = await run('qpdf', ['--json=2', '--json-key=qpdf', '--json-stream-data=inline', prefix], {
        maxBuffer: 64 * 1024 * 1024,
      })
      views.push(JSON.parse(stdout).qpdf[1])
    }
    for (let k = 1; k < views.length; k++) {
      const [before, after] = [views[k - 1]!, views[k]!]
      const changed = Object.keys(before).filter(
        (key) => key !== 'trailer' && JSON.stringify(before[key]) !== JSON.stringify(after[key]),
      )
      for (const key of changed) {
        const object = after[key]!
        expect(object.stream, `revision ${k} rewrites the stream ${key}`).toBeUndefined()
        const value = object.value as Record<string, unknown> | unknown[]
        const kind = Array.isArray(value)
          ? 'an array (a page’s /Annots)'
          : value['/Type'] === '/Catalog'
            ? 'the catalog'
            : value['/Type'] === '/Page'
              ? 'a page'
              : '/Fields' in value
                ? 'the form'
                : `something else: ${JSON.stringify(value).slice(0, 200)}`
        expect(
          ['an array (a page’s /Annots)', 'the catalog', 'a page', 'the form'],
          `${key} in revision ${k}`,
        ).toContain(kind)
        // A rewritten page keeps its content.
        if (kind === 'a page') {
          const previous = (before[key]!.value as Record<string, unknown>)['/Contents']
          expect((value as Record<string, unknown>)['/Contents']).toEqual(previous)
        }
      }
    }
  })

  it('is verified by anchor verify, which names each PDF signature’s certificate and timestamp', async () => {
    const verified = await anchor(['verify', file('twice.pdf')])
    expect(
      verified.stdout.match(
        /PDF signature valid, made with the certificate the service's development CA issued ada@example\.com .*/g,
      ),
    ).toHaveLength(2)
    expect(verified.stdout).toContain('timestamped 20')
    expect(verified.stdout).toContain('by Document Anchoring Service development TSA (untrusted)')
    // "Trusted" means what pdfsig means: the development CA is no root this system (or any reader) trusts.
    expect(
      verified.stdout.match(/its certificate was issued by the service's development CA, which no PDF reader trusts/g),
    ).toHaveLength(2)
    expect(verified.stdout).toContain('chain 31337 is a development chain')
    const json = JSON.parse((await anchor(['verify', file('twice.pdf'), '--json'])).stdout)
    expect(json.signatures.map((s: { pdfSignature: { trusted: boolean } }) => s.pdfSignature.trusted)).toEqual([
      false,
      false,
    ])
    expect(verified.stdout.match(/long-term validation B-LTA: .*\(not revoked as of .*, by OCSP\)/g)).toHaveLength(2)
    expect(verified.stdout).toMatch(/Verified: all 2 signatures are valid\.\n$/)
    expect(verified.code).toBe(0)
  })
})

describe('the signer’s key and certificate', () => {
  it('stay on this device, readable by the user alone; the service certified them once for both signatures', async () => {
    for (const name of ['signer-key.pem', 'signer-certificates.json']) {
      expect((await stat(join(dir, 'config', 'anchor', name))).mode & 0o777, name).toBe(0o600)
    }
    const issued = await query<{ n: unknown }>(t.database.handle.db, sql`SELECT count(*) AS n FROM signer_certificates`)
    expect(Number(issued[0]!.n)).toBe(1)
    // And the service holds no private key of the signer's: only the certificate it issued.
    const key = await readFile(join(dir, 'config', 'anchor', 'signer-key.pem'), 'utf8')
    const stored = await query<{ certificate: string }>(
      t.database.handle.db,
      sql`SELECT certificate FROM signer_certificates`,
    )
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----/)
    expect(stored[0]!.certificate).not.toContain(key.split('\n')[1]!)
    // What it certified is the public half of the key made on this device.
    const certified = certificateOf(new Uint8Array(Buffer.from(stored[0]!.certificate, 'base64')))
    const local = createPublicKey(createPrivateKey(key)).export({ type: 'spki', format: 'der' })
    expect(Buffer.from(certified.subjectPublicKeyInfo.toSchema().toBER(false)).equals(local)).toBe(true)
  })
})

describe('a PDF another product signed first', () => {
  it('keeps that signature valid in pdfsig after ours, and anchor verify checks it too', async () => {
    await writeFile(file('theirs.pdf'), await signedBySignpdf(await pdfLibDocument()))
    const signed = await anchor(['sign', file('theirs.pdf'), '-o', file('theirs-and-ours.pdf'), '--name', 'Ada'])
    expect(signed.code).toBe(0)
    const both = new Uint8Array(await readFile(file('theirs-and-ours.pdf')))
    expect((await pdfsigReport(both)).signatures.map((s) => s.validation)).toEqual([
      'Signature is Valid.',
      'Signature is Valid.',
      'Signature has not yet been verified.',
    ])
    const verified = await anchor(['verify', file('theirs-and-ours.pdf')])
    expect(verified.stdout).toMatch(
      /Other PDF signatures and document timestamps:\n {4}"Signature1" \(revision 1, adbe\.pkcs7\.detached\): valid, signed by CN=Other Tool Signer, certificate not trusted: it does not chain to a trusted root, no timestamp/,
    )
    expect(verified.code).toBe(0)

    // One byte of their signed part changed: their signature breaks, and so does the verification.
    const bytes = new Uint8Array(await readFile(file('theirs.pdf')))
    const at = Buffer.from(bytes).indexOf('/Producer')
    const tampered = both.slice()
    tampered[at + 1] = 'p'.charCodeAt(0)
    await writeFile(file('tampered.pdf'), tampered)
    const broken = await anchor(['verify', file('tampered.pdf')])
    expect(broken.stdout).toMatch(
      /"Signature1" \(revision 1, adbe\.pkcs7\.detached\): INVALID: the document’s bytes are not what was signed/,
    )
    expect(broken.code).toBe(1)
  })
})
