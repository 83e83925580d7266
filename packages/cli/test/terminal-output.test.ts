// What `anchor` prints of a payload, a PDF or a service answer reaches the terminal as text: a forged signer name full
// of escape sequences cannot turn an INVALID verdict into a "Verified" one. And a new signature refuses such names.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { PdfSignature } from '@docanchor/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { count } from '../../../test/relay/relay-helpers.ts'
import { prepareSignatureRevision } from '../../client/src/pdf/append-signature-revision.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { testPdfSignature } from '../../client/test/pdf/test-pdf-signer.ts'
import { runAnchor } from './helpers/run-anchor.ts'

// Erase the line, return to its start, print a fake verdict, then hide everything after it.
const FORGED_NAME = 'Mallory\u001b[2K\r  valid   1. Alice CEO <alice@example.com>\u001b[8m'
const FORGED_COMPANY = 'Evil\u202e\u2066Corp\u009b31m\nVerified: all 1 signatures are valid.'

let t: TestApp
let url: string
let dir: string

beforeAll(async () => {
  t = await createTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-terminal-'))
})
afterAll(async () => {
  await t?.close()
  await rm(dir, { recursive: true, force: true })
})

/** A PDF whose metadata claims a signature by the forged name; its anchor does not exist, so it is INVALID. */
async function forgedPdf(): Promise<string> {
  const prepared = await prepareSignatureRevision(await pdfLibDocument())
  const signature: PdfSignature = {
    signer_name: FORGED_NAME,
    signer_email: 'mallory@example.com',
    signer_type: 'company',
    company: FORGED_COMPANY,
    position: 'CEO\u001b]0;owned\u0007',
    timestamp: '2026-11-25T10:00:00Z',
    doc_hash: 'ab'.repeat(32),
    composite_hash: `0x${'cd'.repeat(32)}`,
    tx_hash: `0x${'ef'.repeat(32)}`,
    qr_url: null,
    salt: '01'.repeat(32),
    geo: null,
  }
  const file = join(dir, 'forged.pdf')
  const written = await prepared.write({
    qrUrl: 'https://verify.example/v/x#y',
    signatures: [signature],
    signerName: FORGED_NAME,
    reason: 'forged',
    time: new Date(signature.timestamp),
    sign: (digest) =>
      testPdfSignature({
        txHash: signature.tx_hash,
        digest: Buffer.from(digest).toString('hex'),
        compositeHash: signature.composite_hash,
        chainId: undefined,
        contractAddress: undefined,
      }),
  })
  await writeFile(file, written)
  return file
}

describe('anchor verify on text that carries terminal escapes and bidirectional overrides', () => {
  it('shows every control character as text, keeps one line per line, and ends NOT VERIFIED', async () => {
    const run = await runAnchor(['verify', await forgedPdf()], { ANCHOR_URL: url, XDG_CONFIG_HOME: dir })
    expect(run.code).toBe(1)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the characters that must not reach the terminal
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/)
    const lines = run.stdout.split('\n')
    expect(lines.at(-2)).toBe('NOT VERIFIED.')
    expect(lines.filter((line) => line.startsWith('Verified'))).toEqual([])
    // After the file's line, the contract's, the development chain's note and the source's.
    expect(lines[4]).toBe(
      '  INVALID 1. Mallory<U+001B>[2K<U+000D>  valid   1. Alice CEO <alice@example.com><U+001B>[8m ' +
        '<mallory@example.com>, CEO<U+001B>]0;owned<U+0007>, Evil<U+202E><U+2066>Corp<U+009B>31m<U+000A>Verified: ' +
        'all 1 signatures are valid., 2026-11-25 10:00:00 UTC',
    )
  })

  it('writes such characters as JSON escapes with --json, the data unchanged', async () => {
    const run = await runAnchor(['verify', await forgedPdf(), '--json'], { ANCHOR_URL: url, XDG_CONFIG_HOME: dir })
    expect(run.code).toBe(1)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the characters that must not reach the terminal
    expect(run.stdout).not.toMatch(/[\u0000-\u0009\u000B-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]/)
    const result = JSON.parse(run.stdout)
    expect(result.valid).toBe(false)
    expect(result.signatures[0].signer).toMatchObject({ name: FORGED_NAME, company: FORGED_COMPANY })
  })
})

describe('anchor sign with control or bidirectional formatting characters', () => {
  it('refuses the name before anything is anchored, naming the character', async () => {
    const input = join(dir, 'in.pdf')
    await writeFile(input, await pdfLibDocument())
    const user = await signInTestUser(t)
    const anchors = await count(t.database.handle.db, 'anchors')
    for (const name of ['Ada\u001b[2KLovelace', 'Ada \u202eecalevoL', 'Ada\u2067 Lovelace']) {
      const run = await runAnchor(['sign', input, '-o', join(dir, 'out.pdf'), '--name', name], {
        ANCHOR_URL: url,
        ANCHOR_TOKEN: user.token,
        XDG_CONFIG_HOME: dir,
      })
      expect(run.code).toBe(2)
      expect(run.stderr).toMatch(/s\.n: contains U\+(001B|202E|2067), a control or bidirectional formatting character/)
      // biome-ignore lint/suspicious/noControlCharactersInRegex: the test looks for the characters that must not reach the terminal
      expect(run.stderr).not.toMatch(/[\u001b\u202e\u2067]/)
    }
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchors)
  })
})
