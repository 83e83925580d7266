// `anchor verify` and `anchor sign` on files an attacker changed after Alice signed them through the service on
// anvil: every attack of the client package's attacks.ts fails verification (exit 1) with its message, before and
// after another product countersigns it, and `anchor sign` refuses it (exit 2) before anything is anchored; a
// countersignature of ours keeps both signatures valid.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { query } from '../../../test/relay/relay-helpers.ts'
import { ATTACKS, attackableOriginal } from '../../client/test/pdf/attacks.ts'
import { signedByPoppler } from '../../client/test/pdf/other-signers.ts'
import { runAnchor } from './helpers/run-anchor.ts'

let t: TestApp
let url: string
let dir: string
let alice: string
let carol: string
let signed: Uint8Array

const anchor = (argv: string[], token: string) =>
  runAnchor(argv, { XDG_CONFIG_HOME: join(dir, 'config'), ANCHOR_URL: url, ANCHOR_TOKEN: token })

async function anchorCount(): Promise<number> {
  return Number(((await query(t.database.handle.db, sql`SELECT count(*) AS n FROM anchors`))[0] as { n: unknown }).n)
}

beforeAll(async () => {
  t = await createTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-changes-'))
  alice = (await signInTestUser(t, 'alice@example.com')).token
  carol = (await signInTestUser(t, 'carol@example.com')).token
  await writeFile(join(dir, 'contract.pdf'), await attackableOriginal())
  const run = await anchor(['sign', join(dir, 'contract.pdf'), '-o', join(dir, 'signed.pdf'), '--name', 'Alice'], alice)
  expect(run.code).toBe(0)
  signed = new Uint8Array(await readFile(join(dir, 'signed.pdf')))
}, 120_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor verify', () => {
  it('says what you see is what was signed, and again after a countersignature', async () => {
    const first = await anchor(['verify', join(dir, 'signed.pdf')], carol)
    expect(first.stdout).toContain('what you see is what was signed: nothing shown changed afterwards')
    expect(first.code).toBe(0)
    const counter = join(dir, 'countersigned.pdf')
    expect((await anchor(['sign', join(dir, 'signed.pdf'), '-o', counter, '--name', 'Carol'], carol)).code).toBe(0)
    const second = await anchor(['verify', counter], carol)
    expect(second.stdout.match(/what you see is what was signed/g)).toHaveLength(2)
    expect(second.stdout).toContain('Verified: all 2 signatures are valid.')
    expect(second.code).toBe(0)
  })
})

describe('anchor sign’s output', () => {
  it('never replaces its input, replaces another file only with --force, signs a file twice only with --again, and anchors nothing when it refuses', async () => {
    const before = await anchorCount()
    const signedFile = join(dir, 'signed.pdf')
    const self = await anchor(['sign', signedFile, '-o', signedFile, '--name', 'Carol', '--force'], carol)
    expect(self.stderr).toContain('is the input itself: a signed copy never replaces the file it was made from')
    expect(self.code).toBe(2)
    const existing = join(dir, 'existing.pdf')
    await writeFile(existing, 'a file of the user’s')
    const refused = await anchor(['sign', signedFile, '-o', existing, '--name', 'Carol'], carol)
    expect(refused.stderr).toContain(`${existing} exists: add --force to replace it; nothing was signed`)
    expect(refused.code).toBe(2)
    expect(await readFile(existing, 'utf8')).toBe('a file of the user’s')
    expect(await anchorCount()).toBe(before)
    // Carol countersigned this very file above: a second signature of it is said first, and made only with --again.
    const again = await anchor(['sign', signedFile, '-o', join(dir, 'again.pdf'), '--name', 'Carol'], carol)
    expect(again.stderr).toContain(`you already signed this same file (${signedFile}) on `)
    expect(again.stderr).toContain(`writing ${join(dir, 'countersigned.pdf')} (transaction 0x`)
    expect(again.stderr).toContain('add --again')
    expect(again.code).toBe(2)
    expect(await anchorCount()).toBe(before)
    const forced = await anchor(['sign', signedFile, '-o', existing, '--name', 'Carol', '--force', '--again'], carol)
    expect(forced.code).toBe(0)
    expect(await anchorCount()).toBe(before + 1)
  })
})

describe('anchor verify of content added after Alice signed', () => {
  it('says in its own line that what you see is not what was signed, and where; --json lists the changes', async () => {
    const file = join(dir, 'content-added.pdf')
    await writeFile(file, await ATTACKS[0]!.make(signed))
    const text = await anchor(['verify', file], carol)
    expect(text.stdout).toContain('what you see is NOT what was signed: the document changed afterwards (page 1)')
    const json = JSON.parse((await anchor(['verify', file, '--json'], carol)).stdout)
    expect(json.signatures[0].changesAfterSigning.map((change: { kind: string }) => change.kind)).toEqual([
      'resources',
      'content',
    ])
  })
})

describe.each(ATTACKS)('$name', (attack) => {
  let file: string
  beforeAll(async () => {
    file = join(dir, `${attack.name.replace(/\W+/g, '-')}.pdf`)
    await writeFile(file, await attack.make(signed))
  })

  it('fails `anchor verify` with its message (exit 1)', async () => {
    const run = await anchor(['verify', file], carol)
    expect(run.stdout).toMatch(/INVALID 1\. Alice <alice@example\.com>/)
    expect(run.stdout).toMatch(attack.message)
    expect(run.stdout).not.toContain('what you see is what was signed')
    expect(run.stdout).toContain('NOT VERIFIED.')
    expect(run.code).toBe(1)
  })

  it('still fails `anchor verify` after another product countersigns it', async () => {
    const countersigned = join(dir, 'countersigned-by-poppler.pdf')
    await writeFile(countersigned, await signedByPoppler(new Uint8Array(await readFile(file))))
    const run = await anchor(['verify', countersigned], carol)
    expect(run.stdout).toMatch(/INVALID 1\. Alice <alice@example\.com>/)
    expect(run.stdout).toMatch(attack.message)
    expect(run.code).toBe(1)
  })

  it('is refused by `anchor sign` (exit 2) before anything is anchored', async () => {
    const before = await anchorCount()
    const run = await anchor(['sign', file, '-o', join(dir, 'countersigned-attack.pdf'), '--name', 'Carol'], carol)
    expect(run.stderr).toMatch(/changed after it was signed/)
    expect(run.stderr).toMatch(attack.message)
    expect(run.code).toBe(2)
    expect(await anchorCount()).toBe(before)
  })
})
