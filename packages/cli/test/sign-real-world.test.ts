// `anchor sign` and `anchor verify` on PDFs as they arrive (encrypted with an owner or a user password), and a sign
// that would fail afterwards failing before it anchors: nothing is spent on a missing output directory, a QR code
// off the page, a size out of range, an e-mail that is not the account's or a wrong password.
import { mkdir, mkdtemp, readdir, readFile, rm, truncate, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { readSignedPdf } from '@docanchor/client'
import { PDFDocument } from 'pdf-lib'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { count } from '../../../test/relay/relay-helpers.ts'
import { qpdfCheck, qpdfTransform, scanQrCodes } from '../../client/test/pdf/fixtures.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { runAnchor } from './helpers/run-anchor.ts'

let t: TestApp
let url: string
let dir: string
let token: string

const anchor = (argv: string[], stdin?: string) =>
  runAnchor(argv, { XDG_CONFIG_HOME: join(dir, 'config'), ANCHOR_URL: url, ANCHOR_TOKEN: token }, () =>
    Promise.resolve(stdin ?? ''),
  )
const file = (name: string) => join(dir, name)
const anchors = () => count(t.database.handle.db, 'anchors')

beforeAll(async () => {
  t = await createTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-real-world-'))
  token = (await signInTestUser(t, 'ada@example.com')).token
  await writeFile(file('plain.pdf'), await pdfLibDocument())
}, 120_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor sign spends nothing when it would fail afterwards', () => {
  const refusals: [string, string[], RegExp][] = [
    [
      'an output directory that does not exist',
      ['-o', '/no/such/dir/out.pdf'],
      /^anchor sign: cannot write \/no\/such\/dir\/out\.pdf: its directory does not exist; nothing was signed\n$/,
    ],
    ['an output that is a directory', ['-o', '/tmp'], /cannot write \/tmp: it is a directory; nothing was signed/],
    [
      'a QR code off the page (a negative --x parses)',
      ['--x', '-50', '--y', '20'],
      /on page 1, the code would lie off the page: x must be between 0 and 499 and y between 0 and 725\.84/,
    ],
    [
      'a QR code beyond the page',
      ['--x', '5000', '--y', '5000'],
      /the code would lie off the page: x must be between 0 and 499 .* the page shows 595 × 842 pt\)/,
    ],
    ['a --size out of range', ['--size', '5'], /--size 5 is not valid: it must be a number of points from 36 to 1000/],
    ['a page the PDF lacks', ['--page', '3'], /page 3 does not exist \(the PDF has 1\)/],
    [
      'an --email that is not the account’s',
      ['--email', 'boss@example.com'],
      /--email boss@example\.com is not the address you are logged in with \(ada@example\.com\): .* add --unattested/,
    ],
    [
      'a password on the command line',
      ['--password', 'secret'],
      /a password is never given on the command line.*--password-file <file>/,
    ],
  ]
  for (const [what, args, message] of refusals) {
    it(`refuses ${what} before anchoring, exit code 2`, async () => {
      const before = await anchors()
      const run = await anchor(['sign', file('plain.pdf'), '-o', file('out.pdf'), '--name', 'Ada', ...args])
      expect(run.stderr).toMatch(message)
      expect(run.code).toBe(2)
      expect(await anchors()).toBe(before)
      // No reservation is left behind beside the output.
      expect((await readdir(dir)).filter((name) => name.endsWith('.tmp'))).toEqual([])
    })
  }

  it('counts coordinates from the displayed page’s lower-left corner, wherever its box starts', async () => {
    const doc = await PDFDocument.create()
    doc.addPage([595, 842]).setMediaBox(-300, -300, 595, 842)
    await writeFile(file('shifted.pdf'), await doc.save())
    // Coordinates are from the displayed page's lower-left corner, wherever the box starts: -50 is still off it.
    const off = await anchor(['sign', file('shifted.pdf'), '-o', file('shifted-out.pdf'), '--name', 'Ada', '--x=-50'])
    expect(off.stderr).toMatch(/x must be between 0 and 499/)
    const on = await anchor(['sign', file('shifted.pdf'), '-o', file('shifted-out.pdf'), '--name', 'Ada', '--x', '10'])
    expect(on.stderr).toBe('')
    expect(on.code).toBe(0)
    expect(await scanQrCodes(new Uint8Array(await readFile(file('shifted-out.pdf'))))).toHaveLength(1)
  })

  it('signs as another e-mail only with --unattested, and verifiers then call the identity claimed', async () => {
    const run = await anchor([
      'sign',
      file('plain.pdf'),
      '-o',
      file('unattested.pdf'),
      '--name',
      'Ada',
      '--email',
      'ada.lovelace@home.example',
      '--unattested',
    ])
    expect(run.code).toBe(0)
    const verified = await anchor(['verify', file('unattested.pdf')])
    expect(verified.stdout).toContain('1 signature in 4 revisions')
    expect(verified.stdout).toContain('Ada <ada.lovelace@home.example>')
    expect(verified.stdout).toContain('identity claimed by the signer’s application, not attested')
    expect(verified.stdout).toMatch(/Verified: the signature is valid\.\n$/)
    expect(verified.code).toBe(0)

    const unsigned = await anchor(['verify', file('plain.pdf')])
    expect(unsigned.stdout).toContain('0 signatures in 1 revision\n')
  })
})

describe('encrypted PDFs through the CLI', () => {
  it('signs and verifies a PDF with an owner password only, which needs no password to open', async () => {
    const encrypted = await qpdfTransform(await pdfLibDocument(), ['--encrypt', '', 'owner-secret', '256', '--'])
    await writeFile(file('owner-only.pdf'), encrypted)
    const run = await anchor(['sign', file('owner-only.pdf'), '-o', file('owner-only-signed.pdf'), '--name', 'Ada'])
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    // Signed and timestamped (B-T); the PDF library cannot yet append validation data to an encrypted file safely.
    expect(run.stdout).toContain(
      'warning: no long-term validation data was added (validation data cannot be added to an encrypted PDF yet)',
    )
    const signed = new Uint8Array(await readFile(file('owner-only-signed.pdf')))
    expect(await qpdfCheck(signed)).toMatch(/No syntax or stream encoding errors/)
    expect((await readSignedPdf(signed)).encrypted).toBe(true)
    const verified = await anchor(['verify', file('owner-only-signed.pdf')])
    expect(verified.stdout).toContain('Verified: the signature is valid.')
    expect(verified.code).toBe(0)
  })

  it('needs --password-file for a user password, from a file or stdin, and says when it is wrong', async () => {
    const encrypted = await qpdfTransform(await pdfLibDocument(), ['--encrypt', 'user-secret', 'owner', '256', '--'])
    await writeFile(file('locked.pdf'), encrypted)
    await writeFile(file('password.txt'), 'user-secret\n')
    await writeFile(file('wrong.txt'), 'guess\n')
    const sign = (...extra: string[]) =>
      anchor(['sign', file('locked.pdf'), '-o', file('locked-signed.pdf'), '--name', 'Ada', ...extra])
    const before = await anchors()

    const none = await sign()
    expect(none.stderr).toMatch(
      /^anchor sign: the PDF is protected by a password that is needed to open it; give it in a file with --password-file <file>/,
    )
    expect(none.code).toBe(2)
    const wrong = await sign('--password-file', file('wrong.txt'))
    expect(wrong.stderr).toBe(
      `anchor sign: the password given with --password-file does not open ${file('locked.pdf')}\n`,
    )
    expect(wrong.code).toBe(2)
    expect(await anchors()).toBe(before)

    const right = await sign('--password-file', file('password.txt'))
    expect(right.stderr).toBe('')
    expect(right.code).toBe(0)
    const locked = await anchor(['verify', file('locked-signed.pdf')])
    expect(locked.code).toBe(2)
    const fromStdin = await anchor(['verify', file('locked-signed.pdf'), '--password-file', '-'], 'user-secret\n')
    expect(fromStdin.stdout).toContain('Verified: the signature is valid.')
    expect(fromStdin.code).toBe(0)
    // Nothing the user typed as a password appears in anything printed.
    for (const run of [none, wrong, right, locked, fromStdin]) expect(run.stdout + run.stderr).not.toContain('secret')
  })

  it('refuses a "password file" that is not one, and a PDF over the documented maximum before reading it', async () => {
    await mkdir(file('a-directory'), { recursive: true })
    const directory = await anchor(['verify', file('plain.pdf'), '--password-file', file('a-directory')])
    expect(directory.stderr).toContain('it is a directory')
    await writeFile(file('long.txt'), 'x'.repeat(2000))
    const long = await anchor(['verify', file('plain.pdf'), '--password-file', file('long.txt')])
    expect(long.stderr).toContain('is 2000 bytes; the most this command reads is 1024 bytes')
    expect(long.code).toBe(2)

    await writeFile(file('huge.pdf'), '')
    await truncate(file('huge.pdf'), 101 * 1024 * 1024)
    const huge = await anchor(['verify', file('huge.pdf')])
    expect(huge.stderr).toBe(`anchor verify: ${file('huge.pdf')} is 101 MB; the most this command reads is 100 MB\n`)
    expect(huge.code).toBe(2)
  })
})
