// `anchor account export|notifications|delete` against the service: the export as JSON or a 0600 file, the
// countersignature e-mail turned on and off, and a deletion that needs the address once more and a recent sign-in,
// and forgets the stored login once the account is gone.
import { mkdtemp, readFile, rm, stat } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startSession } from '../../../src/auth/sessions.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { newBody, postRelay } from '../../../test/relay/relay-helpers.ts'
import { saveStoredLogin, tokenFile } from '../src/token-store.ts'
import { runAnchor } from './helpers/run-anchor.ts'
import { runAnchorInTerminal } from './helpers/run-in-terminal.ts'

let t: TestApp
let url: string
let user: SignedInUser
let txHash: string
let dir: string
let configDir: string

const account = (argv: string[], token?: string) =>
  runAnchor(['account', ...argv], {
    ANCHOR_URL: url,
    XDG_CONFIG_HOME: join(dir, 'config'),
    ...(token !== undefined && { ANCHOR_TOKEN: token }),
  })

beforeAll(async () => {
  t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  user = await signInTestUser(t)
  txHash = (await postRelay(t.app, user.headers, newBody())).json().txHash
  dir = await mkdtemp(join(tmpdir(), 'anchor-account-'))
  configDir = join(dir, 'config', 'anchor')
  const login = { service: url, email: user.email, token: user.token, expiresAt: new Date().toISOString() }
  await saveStoredLogin(configDir, login)
}, 120_000)
afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('anchor account export', () => {
  it('prints everything the service holds about the account as JSON', async () => {
    const run = await account(['export'])
    expect(run.code, run.stderr).toBe(0)
    const exported = JSON.parse(run.stdout)
    expect(exported.account.email).toBe(user.email)
    expect(exported.anchors.map((anchor: { txHash: string }) => anchor.txHash)).toEqual([txHash])
  })

  it('writes it to a file readable by the user alone with -o', async () => {
    const file = join(dir, 'export.json')
    const run = await account(['export', '-o', file])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toBe(`Wrote everything ${url} holds about ${user.email} to ${file}.\n`)
    expect((await stat(file)).mode & 0o777).toBe(0o600)
    expect(JSON.parse(await readFile(file, 'utf8')).account.email).toBe(user.email)
  })

  it('error: refuses an output in a missing directory before asking the service', async () => {
    const run = await account(['export', '-o', join(dir, 'missing', 'export.json')])
    expect(run.stderr).toContain('its directory does not exist; nothing was exported')
    expect(run.code).toBe(2)
  })
})

describe('anchor account notifications', () => {
  it('shows the countersignature e-mail off, turns it on and off, and refuses anything but on or off', async () => {
    const shown = await account(['notifications'])
    expect(shown.code, shown.stderr).toBe(0)
    expect(shown.stdout).toBe('No e-mail when someone signs after you (turn it on with --countersigned on).\n')
    const on = await account(['notifications', '--countersigned', 'on'])
    expect(on.stdout).toBe(`An e-mail goes to ${user.email} when someone signs a document after you.\n`)
    expect((await account(['notifications'])).stdout).toBe(on.stdout)
    const wrong = await account(['notifications', '--countersigned', 'yes'])
    expect(wrong.stderr).toContain('--countersigned takes on or off, not yes')
    expect(wrong.code).toBe(2)
    expect((await account(['export', '--countersigned', 'on'])).code).toBe(2)
    const off = await account(['notifications', '--countersigned', 'off'])
    expect(off.stdout).toBe(shown.stdout)
  })

  it('turns the e-mail on in a terminal, as a person types it, and ends by itself', async () => {
    const env = { ANCHOR_URL: url, XDG_CONFIG_HOME: join(dir, 'config') }
    const { code, output } = await runAnchorInTerminal(['account', 'notifications', '--countersigned', 'on'], env)
    expect(code).toBe(0)
    expect(output).toContain(`An e-mail goes to ${user.email} when someone signs a document after you.`)
    expect((await account(['notifications', '--countersigned', 'off'])).code).toBe(0)
  })
})

describe('anchor account delete', () => {
  it('error: refuses without the address once more, or with another, and deletes nothing', async () => {
    for (const confirm of [[], ['--confirm', 'someone-else@example.com']]) {
      const run = await account(['delete', ...confirm])
      expect(run.stderr).toContain(`needs its address once more: --confirm ${user.email}`)
      expect(run.code).toBe(2)
    }
    expect((await account(['export'])).code).toBe(0)
  })

  it('error: asks for a recent sign-in when the login is older than the service allows', async () => {
    const { database, jwt } = t.app.deps
    const old = await startSession(database.db, jwt, user, 'email', new Date(Date.now() - 11 * 60_000))
    const run = await account(['delete', '--confirm', user.email], old.token)
    expect(run.stderr).toContain('the service wants a recent sign-in for this: run `anchor login`')
    expect(run.code).toBe(3)
    expect((await account(['export'])).code).toBe(0)
  })

  it('deleting another account (ANCHOR_TOKEN) keeps the stored login of this one', async () => {
    const other = await signInTestUser(t)
    const run = await account(['delete', '--confirm', other.email], other.token)
    expect(run.code, run.stderr).toBe(0)
    expect(JSON.parse(await readFile(tokenFile(configDir), 'utf8')).email).toBe(user.email)
  })

  it('deletes the account, says its anchors stay, and forgets the stored login', async () => {
    const run = await account(['delete', '--confirm', user.email.toUpperCase()])
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toContain(`Deleted the account ${user.email} at ${url}.`)
    await expect(stat(tokenFile(configDir))).rejects.toMatchObject({ code: 'ENOENT' })
    const me = await t.app.inject({ url: '/api/auth/me', headers: user.headers })
    expect(me.statusCode).toBe(401)
    const verified = await t.app.inject({ url: `/api/verify/${txHash}` })
    expect(verified.json()).toMatchObject({ payloadErased: true })
  })
})
