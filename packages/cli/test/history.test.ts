// `anchor history`: the login's anchors, newest first, as lines or JSON; a page by default, every one with --all.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { newBody, postRelay } from '../../../test/relay/relay-helpers.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { saveStoredLogin } from '../src/token-store.ts'
import { runAnchor } from './helpers/run-anchor.ts'

let t: TestApp
let url: string
let user: SignedInUser
/** Oldest first. */
const made: string[] = []

const history = (argv: string[], token = user.token) =>
  runAnchor(['history', ...argv], { ANCHOR_URL: url, ANCHOR_TOKEN: token, XDG_CONFIG_HOME: '/nonexistent' })

beforeAll(async () => {
  t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  user = await signInTestUser(t)
  for (let i = 0; i < 5; i++) made.push((await postRelay(t.app, user.headers, newBody())).json().txHash)
}, 120_000)
afterAll(async () => t?.close())

describe('anchor history', () => {
  it('prints one line per anchor, newest first, and says when there are more', async () => {
    const run = await history(['--limit', '2'])
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(3)
    expect(lines[0]).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  confirmed  ${made[4]}  block \\d+$`),
    )
    expect(lines[1]).toContain(made[3])
    expect(lines[2]).toBe('… more: `anchor history --all` lists every one')
  })

  it('lists every anchor with --all, as JSON with --json', async () => {
    const run = await history(['--all', '--json'])
    expect(run.code).toBe(0)
    const anchors = JSON.parse(run.stdout) as { txHash: string; status: string }[]
    expect(anchors.map((a) => a.txHash)).toEqual([...made].reverse())
    expect(new Set(anchors.map((a) => a.status))).toEqual(new Set(['confirmed']))
  })

  it('goes to the service `anchor login --service` chose, with no --service or ANCHOR_URL', async () => {
    const home = await mkdtemp(join(tmpdir(), 'anchor-history-home-'))
    try {
      await saveStoredLogin(join(home, 'anchor'), {
        service: url,
        email: user.email,
        token: user.token,
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      })
      const run = await runAnchor(['history', '--limit', '1'], { XDG_CONFIG_HOME: home })
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      expect(run.stdout).toContain(made[4])
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })

  it('names the file each anchor this computer signed was written to, for that account only', async () => {
    const home = await mkdtemp(join(tmpdir(), 'anchor-history-files-'))
    try {
      const signer = await signInTestUser(t)
      const env = { ANCHOR_URL: url, ANCHOR_TOKEN: signer.token, XDG_CONFIG_HOME: home }
      await writeFile(join(home, 'lease.pdf'), await pdfLibDocument())
      const signed = await runAnchor(
        ['sign', join(home, 'lease.pdf'), '-o', join(home, 'lease-signed.pdf'), '--name', 'Ada', '--level', 'B-T'],
        env,
      )
      expect(signed.stderr).toBe('')
      const txHash = /transaction (0x[0-9a-f]{64})/.exec(signed.stdout)![1]!
      const lines = (await runAnchor(['history'], env)).stdout.trimEnd().split('\n')
      expect(lines).toHaveLength(1)
      expect(lines[0]).toMatch(new RegExp(`UTC  confirmed  ${txHash}  block \\d+ +${join(home, 'lease-signed.pdf')}$`))
      const json = JSON.parse((await runAnchor(['history', '--json'], env)).stdout)
      expect(json[0].file).toEqual({ input: join(home, 'lease.pdf'), output: join(home, 'lease-signed.pdf') })
      // Another account on the same computer sees its own anchors, with no file of the first one's; and signing the
      // same file is its own first signature of it, not refused as a second.
      const other = await runAnchor(['history', '--limit', '1'], { ...env, ANCHOR_TOKEN: user.token })
      expect(other.stdout).not.toContain('lease-signed.pdf')
      const byOther = await runAnchor(
        ['sign', join(home, 'lease.pdf'), '-o', join(home, 'lease-other.pdf'), '--name', 'Bea', '--level', 'B-T'],
        { ...env, ANCHOR_TOKEN: user.token },
      )
      expect(byOther.stderr).toBe('')
      expect(byOther.code).toBe(0)
    } finally {
      await rm(home, { recursive: true, force: true })
    }
  })

  it('says so when there is nothing yet, and refuses bad options before asking the service', async () => {
    const fresh = await signInTestUser(t)
    expect(await history([], fresh.token)).toMatchObject({ code: 0, stdout: 'No anchors yet.\n' })
    for (const argv of [['--limit', '0'], ['--limit', '101'], ['--limit', '2', '--all'], ['extra']]) {
      const run = await history(argv)
      expect(run.code, argv.join(' ')).toBe(2)
      expect(run.stderr, argv.join(' ')).toContain('usage: anchor history')
    }
  })
})
