// `anchor events` and `anchor webhooks` against a running service: the login's events as lines or JSON, from a cursor
// an earlier run printed; endpoints added (the secret shown once), listed, tested and removed; and `--follow` in a
// pseudo-terminal, printing an event that comes while it waits, ended by Ctrl-C.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { newBody, relayMined } from '../../../test/relay/relay-helpers.ts'
import { runAnchor } from './helpers/run-anchor.ts'
import { runAnchorInTerminal } from './helpers/run-in-terminal.ts'

const ANCHOR = fileURLToPath(new URL('../bin/anchor.js', import.meta.url))

let t: TestApp
let url: string
let user: SignedInUser
const made: string[] = []

const anchor = (argv: string[]) =>
  runAnchor(argv, { ANCHOR_URL: url, ANCHOR_TOKEN: user.token, XDG_CONFIG_HOME: '/nonexistent' })

beforeAll(async () => {
  t = await createTestApp({
    env: { RELAY_MONITOR_INTERVAL_MS: '0', WEBHOOK_DISPATCH_INTERVAL_MS: '0', WEBHOOK_RETRY_DELAYS_SECONDS: '0' },
  })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  user = await signInTestUser(t)
  for (let i = 0; i < 2; i++) made.push(await relayMined(t.app, user.headers, newBody()))
  // The feed serves an event once the writers that began before it have ended (on a shared PostgreSQL, others' too).
  const served = async () => (await t.app.inject({ url: '/api/events', headers: user.headers })).json().events.length
  for (let waited = 0; (await served()) < made.length && waited < 15_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}, 120_000)
afterAll(async () => t?.close())

describe('anchor events', () => {
  it('prints the login’s events oldest first, and the cursor to go on from', async () => {
    const run = await anchor(['events'])
    expect(run.code).toBe(0)
    const lines = run.stdout.trimEnd().split('\n')
    expect(lines).toHaveLength(2)
    expect(lines[0]).toMatch(
      new RegExp(`^\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d UTC  anchor\\.confirmed +${made[0]}  block \\d+$`),
    )
    expect(lines[1]).toContain(made[1])
    const next = /^next: anchor events --after (\d+)$/.exec(run.stderr.trim())?.[1]
    expect(next).toBeDefined()
    const after = await anchor(['events', '--after', next!])
    expect(after.stdout).toBe('No events yet.\n')
  })

  it('prints one JSON event per line with --json', async () => {
    const run = await anchor(['events', '--json'])
    const events = run.stdout
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line))
    expect(events.map((e) => [e.type, e.data.txHash])).toEqual(made.map((tx) => ['anchor.confirmed', tx]))
    expect(events[0].id).toMatch(/^evt_/)
  })

  it('refuses a cursor it did not print', async () => {
    const run = await anchor(['events', '--after', 'yesterday'])
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('--after takes a cursor')
  })

  it('follows in a terminal: prints what comes while it waits, and ends on Ctrl-C', async () => {
    const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`
    const command = [process.execPath, ANCHOR, 'events', '--follow'].map(quote).join(' ')
    const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
      env: { ...process.env, TERM: 'dumb', ANCHOR_URL: url, ANCHOR_TOKEN: user.token, XDG_CONFIG_HOME: '/nonexistent' },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
    try {
      await expect.poll(() => output, { timeout: 30_000 }).toContain(made[1])
      const later = await relayMined(t.app, user.headers, newBody())
      await expect.poll(() => output, { timeout: 30_000 }).toContain(later)
      child.stdin.write('\u0003')
      expect(
        await Promise.race([exited, new Promise((resolve) => setTimeout(() => resolve('still running'), 10_000))]),
      ).not.toBe('still running')
    } finally {
      child.kill('SIGKILL')
    }
  })
})

describe('in a terminal', () => {
  it('`anchor events` and `anchor webhooks list` print and exit by themselves', async () => {
    for (const argv of [['events'], ['webhooks', 'list']]) {
      const { code, output } = await runAnchorInTerminal(argv, {
        ANCHOR_URL: url,
        ANCHOR_TOKEN: user.token,
        XDG_CONFIG_HOME: '/nonexistent',
      })
      expect({ argv, code }).toEqual({ argv, code: 0 })
      expect(output).toContain(argv[0] === 'events' ? made[0] : 'webhooks')
    }
  })
})

describe('anchor webhooks', () => {
  it('adds an endpoint showing its secret once, lists it without, tests it and removes it', async () => {
    const added = await anchor([
      'webhooks',
      'add',
      'http://127.0.0.1:9/hook',
      '--events',
      'anchor.confirmed,anchor.reorged',
    ])
    expect(added.code).toBe(0)
    const id =
      /Added webhook ([0-9a-f-]{36}) for http:\/\/127\.0\.0\.1:9\/hook \(anchor\.confirmed, anchor\.reorged\)/.exec(
        added.stdout,
      )?.[1]
    expect(id).toBeDefined()
    const secret = /shown this once: (whsec_\S+)/.exec(added.stdout)?.[1]
    expect(secret).toBeDefined()
    const listed = await anchor(['webhooks', 'list'])
    expect(listed.stdout).toContain(id)
    expect(listed.stdout).toContain('enabled')
    expect(listed.stdout).not.toContain(secret)
    expect((await anchor(['webhooks', 'test', id!])).stdout).toContain('webhook.test')
    expect((await anchor(['webhooks', 'remove', id!])).code).toBe(0)
    expect((await anchor(['webhooks', 'list'])).stdout).toBe('No webhooks.\n')
  })

  it('says why the service refuses an address, and what to type', async () => {
    const refused = await anchor(['webhooks', 'add', 'http://10.0.0.1/hook'])
    expect(refused.code).not.toBe(0)
    expect(refused.stderr).toContain('may not deliver to this URL')
    const usage = await anchor(['webhooks', 'remove'])
    expect(usage.code).toBe(2)
    expect(usage.stderr).toContain('anchor webhooks remove needs its id')
  })

  it('rotates a secret, lists the attempts and replays what failed', async () => {
    const failing = createServer((request, response) => request.resume().on('end', () => response.writeHead(503).end()))
    await new Promise<void>((resolve) => failing.listen(0, '127.0.0.1', resolve))
    try {
      const hook = `http://127.0.0.1:${(failing.address() as AddressInfo).port}/hook`
      const id = JSON.parse((await anchor(['webhooks', 'add', hook, '--json'])).stdout).id as string
      const rotated = await anchor(['webhooks', 'rotate', id])
      expect(rotated.stdout).toMatch(/new secret, shown this once: whsec_\S+/)
      await anchor(['webhooks', 'test', id])
      // One retry at once (WEBHOOK_RETRY_DELAYS_SECONDS=0), then the delivery fails for good.
      expect(await t.app.webhookDispatcher.tick()).toBe(2)
      const attempts = await anchor(['webhooks', 'attempts', id])
      const lines = attempts.stdout.trimEnd().split('\n')
      expect(lines.map((line) => /UTC {2}(\S+) +#(\d) {2}(\S+)/.exec(line)?.slice(1))).toEqual([
        ['503', '2', 'webhook.test'],
        ['503', '1', 'webhook.test'],
      ])
      const replayed = await anchor(['webhooks', 'replay', id, '--since', new Date(Date.now() - 60_000).toISOString()])
      expect(replayed.stdout).toBe(`1 failed deliveries queued again for ${id}.\n`)
      expect(await t.app.webhookDispatcher.tick()).toBe(2)
      const usage = await anchor(['webhooks', 'replay', id])
      expect(usage.stderr).toContain('--event <evt_…> or --since <ISO time>')
    } finally {
      failing.close()
    }
  })
})
