import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { readSignedPdf } from '@docanchor/client'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SmtpInbox, startSmtpInbox } from '../../../test/auth/smtp-inbox.ts'
import { createTestApp, signInTestUser, TEST_JWT_SECRET, type TestApp } from '../../../test/helpers/app.ts'
import { qpdfCheck, qpdfTransform, scanQrCodes } from '../../client/test/pdf/fixtures.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { runAnchor } from './helpers/run-anchor.ts'

const VERIFY_BASE = 'https://verify.example.com'

let inbox: SmtpInbox
let t: TestApp
let url: string
let dir: string
let configHome: string

/** Runs `anchor ...argv` in-process against the test service, with this file's configuration directory. */
const anchor = (argv: string[], env: Record<string, string> = {}, input?: () => Promise<string>) =>
  runAnchor(argv, { XDG_CONFIG_HOME: configHome, ANCHOR_URL: url, ...env }, input)

beforeAll(async () => {
  inbox = await startSmtpInbox()
  t = await createTestApp({
    env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sign-in <sign-in@example.com>', VERIFY_BASE_URL: VERIFY_BASE },
  })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-cli-'))
  configHome = join(dir, 'config')
}, 120_000)

afterAll(async () => {
  await t?.close()
  await inbox?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor login, sign, verify and logout against the service on anvil', () => {
  const original = () => join(dir, 'contract.pdf')
  const signed = (n: number) => join(dir, `signed-${n}.pdf`)
  let grace: string
  let alan: string

  it('logs in with the code typed on the terminal and keeps the token 0600', async () => {
    const email = 'ada@example.com'
    const run = await anchor(['login', '--email', email], {}, async () => `${await inbox.nextCode(email)}\n`)
    expect(run.stderr).toContain(`A 6-digit sign-in code was sent to ${email}.`)
    expect(run.stdout).toMatch(new RegExp(`^Logged in to ${url} as ${email} until `))
    expect(run.code).toBe(0)
    const file = join(configHome, 'anchor', 'token.json')
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    const stored = JSON.parse(await readFile(file, 'utf8'))
    expect(stored).toMatchObject({ service: url, email })
    expect(run.stdout + run.stderr).not.toContain(stored.token)
  })

  it('refuses a wrong code without storing anything new', async () => {
    const email = 'mallory@example.com'
    const run = await anchor(['login', '--email', email, '--service', url], {}, async () => {
      const code = await inbox.nextCode(email)
      return `${String((Number(code) + 1) % 1_000_000).padStart(6, '0')}\n`
    })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain('wrong or expired code')
    const stored = JSON.parse(await readFile(join(configHome, 'anchor', 'token.json'), 'utf8'))
    expect(stored.email).toBe('ada@example.com')
  })

  it('signs a real PDF three times, with different signers, each revision passing qpdf --check', async () => {
    await writeFile(original(), await qpdfTransform(await pdfLibDocument({ pages: 2 }), ['--object-streams=generate']))
    grace = (await signInTestUser(t, 'grace@navy.example', 'google')).token
    alan = (await signInTestUser(t, 'alan@example.org')).token

    const first = await anchor(['sign', original(), '-o', signed(1), '--name', 'Ada Lovelace', '--json'])
    expect(first.stderr).toBe('')
    expect(first.code).toBe(0)
    const second = await anchor(
      [
        'sign',
        signed(1),
        '-o',
        signed(2),
        '--name',
        'Grace Hopper',
        '--type',
        'company',
        '--company',
        'Navy',
        '--position',
        'Rear Admiral',
        '--geo',
        '52.520008,13.404954',
        '--json',
      ],
      { ANCHOR_TOKEN: grace },
    )
    expect(second.code).toBe(0)
    const third = await anchor(
      ['sign', signed(2), '-o', signed(3), '--name', 'Alan Turing', '--page', '2', '--x', '50', '--y', '600', '--json'],
      { ANCHOR_TOKEN: alan },
    )
    expect(third.code).toBe(0)
    const outputs = [first, second, third].map((run) => JSON.parse(run.stdout))
    expect(outputs.map((o) => o.position)).toEqual([1, 2, 3])
    expect(outputs[0].signature).toMatchObject({ signer_email: 'ada@example.com', trust: 'email', verified: true })
    expect(outputs[1].signature).toMatchObject({ signer_email: 'grace@navy.example', trust: 'google', company: 'Navy' })
    expect(outputs[1].signature.geo).toEqual([52.520008, 13.404954])

    for (const n of [1, 2, 3]) {
      const bytes = new Uint8Array(await readFile(signed(n)))
      expect(await qpdfCheck(bytes)).toMatch(/No syntax or stream encoding errors/)
      const pdf = await readSignedPdf(bytes)
      // Each signature's revision, then its long-term validation: a DSS and a document timestamp.
      expect(pdf.revisions.map((r) => r.xrefKind)).toEqual(Array(3 * n + 1).fill('stream'))
      expect(pdf.pdfSignatures.map((field) => field.subFilter)).toEqual(
        Array(n).fill(['ETSI.CAdES.detached', 'ETSI.RFC3161']).flat(),
      )
    }
    // zbar reads from the rendered pages exactly the QR URLs written, on the pages asked for.
    const last = new Uint8Array(await readFile(signed(3)))
    expect((await scanQrCodes(last, 1)).sort()).toEqual([outputs[0].qrUrl, outputs[1].qrUrl].sort())
    expect(await scanQrCodes(last, 2)).toEqual([outputs[2].qrUrl])
    for (const output of outputs) expect(output.qrUrl.startsWith(`${VERIFY_BASE}/v/`)).toBe(true)
  })

  it('verifies three valid signatures in order through the service', async () => {
    const run = await anchor(['verify', signed(3)])
    expect(run.stdout).toContain('3 signatures in 10 revisions')
    expect(run.stdout).toMatch(
      /valid {3}1\. Ada Lovelace[\s\S]*valid {3}2\. Grace Hopper[\s\S]*valid {3}3\. Alan Turing/,
    )
    expect(run.stdout).toContain('Verified: all 3 signatures are valid.')
    expect(run.code).toBe(0)

    const json = await anchor(['verify', signed(3), '--json'])
    const result = JSON.parse(json.stdout)
    expect(result.valid).toBe(true)
    expect(result.signatures.map((s: { signer: { name: string } }) => s.signer.name)).toEqual([
      'Ada Lovelace',
      'Grace Hopper',
      'Alan Turing',
    ])
    expect(result.signatures.map((s: { checks: unknown }) => s.checks)).toEqual(
      Array(3).fill({ documentHash: 'match', anchor: 'found', payload: 'decrypted' }),
    )
    // `anchor sign` sent each payload's salt, so the service attests each signer's account.
    expect(result.signatures.map((s: { identity: string }) => s.identity)).toEqual(['attested', 'attested', 'attested'])
    expect(result.signatures[1].attestation).toMatchObject({ trust: 'google', verified: true })
    expect(result).toMatchObject({ chainId: t.chain.chainId, contract: t.chain.contractAddress.toLowerCase() })
    expect(run.stdout).toContain(
      `checked on chain ${t.chain.chainId} against contract ${t.chain.contractAddress.toLowerCase()} (from the service's /api/info)`,
    )
    expect(run.stdout).toContain('identity attested by the service (anchored by an account signed in with google)')
    expect(run.stdout).toContain('Name, company and position are as the signer stated them: no one attests them.')
  })

  it('verifies straight from the chain with --rpc and --contract, rebuilding each payload from the metadata', async () => {
    const contract = t.chain.contractAddress.toLowerCase()
    const run = await anchor(['verify', signed(3), '--rpc', t.testChain.rpcUrl, '--contract', contract, '--json'], {
      ANCHOR_URL: 'http://127.0.0.1:1',
    })
    const result = JSON.parse(run.stdout)
    expect(result).toMatchObject({
      valid: true,
      source: 'chain',
      chainId: t.chain.chainId,
      contract,
      contractSource: '--contract',
    })
    // The service, which alone holds attestations, is down: nothing is attested, nothing contradicted.
    expect(result.signatures.map((s: { identity: string }) => s.identity)).toEqual(['claimed', 'claimed', 'claimed'])
    expect(result.signatures.map((s: { checks: { payload: string } }) => s.checks.payload)).toEqual([
      'rebuilt',
      'rebuilt',
      'rebuilt',
    ])
    expect(run.code).toBe(0)
    // The text says where the anchors came from, the RPC URL by its origin alone.
    const text = await anchor(
      ['verify', signed(3), '--rpc', `${t.testChain.rpcUrl}?key=secret`, '--contract', contract],
      {
        ANCHOR_URL: 'http://127.0.0.1:1',
      },
    )
    expect(text.stdout).toContain(`anchors read from the chain at ${new URL(t.testChain.rpcUrl).origin}\n`)
    expect(text.stdout).not.toContain('secret')
    const viaService = await anchor(['verify', signed(3)])
    expect(viaService.stdout).toContain(`anchors as the service at ${url} reports them`)
  })

  it('verifies a QR URL on its own', async () => {
    const qrUrl = (await readSignedPdf(new Uint8Array(await readFile(signed(2))))).revisions.findLast(
      (revision) => revision.metadata,
    )!.metadata!.signatures[1]!.qr_url!
    const run = await anchor(['verify', qrUrl])
    expect(run.stdout).toContain('signed by Grace Hopper <grace@navy.example>')
    expect(run.code).toBe(0)
  })

  it('fails every signature after a changed byte and reports bytes appended after the last one', async () => {
    const bytes = new Uint8Array(await readFile(signed(3)))
    const end1 = (await readSignedPdf(bytes)).revisions[1]!.end
    const tampered = bytes.slice()
    // A digit of where the first signature's stamp lies (its /Rect), inside revision 1.
    const at = Buffer.from(bytes.subarray(0, end1)).lastIndexOf('/Rect [') + 8
    tampered[at] = tampered[at] === 0x30 ? 0x31 : 0x30
    await writeFile(join(dir, 'tampered.pdf'), tampered)
    const run = await anchor(['verify', join(dir, 'tampered.pdf'), '--json'])
    const result = JSON.parse(run.stdout)
    // Signature 1's PDF signature covers its own revision; the others' document hashes cover it too.
    expect(result.signatures.map((s: { valid: boolean }) => s.valid)).toEqual([false, false, false])
    expect(result.signatures[0].problems).toEqual([
      'its PDF signature is invalid: the document’s bytes are not what was signed',
    ])
    expect(result.signatures[1].problems[0]).toMatch(/changed since it was signed/)
    expect(run.code).toBe(1)

    await writeFile(join(dir, 'appended.pdf'), new Uint8Array([...bytes, ...Buffer.from('%%EOF\n')]))
    const appended = await anchor(['verify', join(dir, 'appended.pdf')])
    expect(appended.stdout).toContain('6 bytes were added after the last revision')
    expect(appended.stdout).toContain('NOT VERIFIED.')
    expect(appended.code).toBe(1)
  })

  it('gives helpful errors for bad input, no signatures, a down service and an expired login', async () => {
    await writeFile(join(dir, 'note.txt'), 'not a pdf')
    const notPdf = await anchor(['verify', join(dir, 'note.txt')])
    expect(notPdf).toMatchObject({ code: 2, stderr: 'anchor verify: not a PDF file (no %PDF- header)\n' })

    const encrypted = await qpdfTransform(await pdfLibDocument(), ['--encrypt', 'u', 'o', '256', '--'])
    await writeFile(join(dir, 'encrypted.pdf'), encrypted)
    const locked = await anchor(['sign', join(dir, 'encrypted.pdf'), '-o', join(dir, 'x.pdf'), '--name', 'A'])
    expect(locked.code).toBe(2)
    expect(locked.stderr).toContain('the PDF is protected by a password that is needed to open it')

    const unsigned = await anchor(['verify', original()])
    expect(unsigned.stdout).toContain('the PDF has no signatures')
    expect(unsigned.code).toBe(1)

    const down = await anchor(['verify', signed(1)], { ANCHOR_URL: 'http://127.0.0.1:1' })
    expect(down.stderr).toContain('cannot reach the service at http://127.0.0.1:1')
    expect(down.code).toBe(3)

    const expired = await new SignJWT({ email: 'ada@example.com', trust: 'email', verified: true })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuedAt(Math.floor(Date.now() / 1000) - 7200)
      .setExpirationTime(Math.floor(Date.now() / 1000) - 3600)
      .sign(new TextEncoder().encode(TEST_JWT_SECRET))
    const late = await anchor(['sign', original(), '-o', join(dir, 'x.pdf'), '--name', 'Ada'], {
      ANCHOR_TOKEN: expired,
    })
    expect(late.stderr).toMatch(/your login expired at .*: run `anchor login` again/)
    expect(late.code).toBe(3)

    const usage = await anchor(['sign', original(), '--name', 'Ada'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('-o <out.pdf> is required')
  })

  it('logs out: the session is revoked and the token forgotten', async () => {
    const file = join(configHome, 'anchor', 'token.json')
    const { token } = JSON.parse(await readFile(file, 'utf8'))
    const run = await anchor(['logout'])
    expect(run).toMatchObject({ code: 0, stdout: `Logged out of ${url}.\n` })
    await expect(stat(file)).rejects.toThrow(/ENOENT/)
    const me = await t.app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } })
    expect(me.statusCode).toBe(401)
    const after = await anchor(['sign', original(), '-o', join(dir, 'x.pdf'), '--name', 'Ada'])
    expect(after.stderr).toContain('not logged in: run `anchor login`')
    expect(after.code).toBe(3)
  })
})

describe('the anchor bin', () => {
  it('runs from a checkout through packages/cli/bin/anchor.js', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['packages/cli/bin/anchor.js', '--help'])
    expect(stdout).toMatch(/^usage: anchor <command>/)
    expect(stdout).toMatch(/login[\s\S]*logout[\s\S]*sign[\s\S]*verify/)
  })

  it('says its version, the package’s', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['packages/cli/bin/anchor.js', '--version'])
    const { version } = JSON.parse(await readFile('packages/cli/package.json', 'utf8')) as { version: string }
    expect(stdout).toBe(`anchor ${version}\n`)
  })
})
