// Webhooks end to end: an account registers a real HTTP receiver, relays, and the receiver gets each event once,
// signed so that the standardwebhooks package (v1) and the client's verifyWebhook under the published keys (v1a) both
// accept it; and what the schedule says for a receiver that fails, is slow, is gone, asks to wait, or redirects; and
// the addresses the service refuses to call. The dispatcher is driven by hand (WEBHOOK_DISPATCH_INTERVAL_MS=0).
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { verifyWebhook } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import ipaddr from 'ipaddr.js'
import { Webhook } from 'standardwebhooks'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'
import { type AttemptOutcome, addressAllowed, postDelivery } from '../../src/events/webhook-request.ts'
import { pruneWebhookLog } from '../../src/events/webhook-retention.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, query, relayMined } from '../relay/relay-helpers.ts'

const execFileAsync = promisify(execFile)
const WEBHOOK_REQUEST = fileURLToPath(new URL('../../src/events/webhook-request.ts', import.meta.url))

/**
 * What postDelivery makes of each of `names`, called in a child process whose /etc/hosts holds only `hosts` (a
 * private mount namespace: the machine's own file is untouched).
 */
async function postFromOwnHosts(
  hosts: string[],
  names: string[],
  policy: Parameters<typeof postDelivery>[3],
): Promise<Record<string, AttemptOutcome>> {
  const directory = await mkdtemp(join(tmpdir(), 'webhook-hosts-'))
  try {
    const hostsFile = join(directory, 'hosts')
    await writeFile(hostsFile, `${hosts.join('\n')}\n`)
    const script = `
      const { postDelivery } = await import(${JSON.stringify(WEBHOOK_REQUEST)})
      const ipaddr = (await import('ipaddr.js')).default
      const policy = JSON.parse(process.env.POLICY)
      policy.allowedNetworks = policy.allowedNetworks.map((cidr) => ipaddr.parseCIDR(cidr))
      const outcomes = {}
      for (const name of JSON.parse(process.env.NAMES)) {
        outcomes[name] = await postDelivery('http://' + name + ':9/hook', {}, '{}', policy)
      }
      process.stdout.write(JSON.stringify(outcomes))`
    const { stdout } = await execFileAsync(
      'unshare',
      [
        ...['--mount', '--propagation', 'private', 'sh', '-c', 'mount --bind "$0" /etc/hosts && exec "$@"', hostsFile],
        ...[process.execPath, '--import', 'tsx', '--input-type=module', '-e', script],
      ],
      {
        env: {
          ...process.env,
          NAMES: JSON.stringify(names),
          POLICY: JSON.stringify({
            ...policy,
            allowedNetworks: policy.allowedNetworks.map(([network, bits]) => `${network.toString()}/${bits}`),
          }),
        },
      },
    )
    return JSON.parse(stdout) as Record<string, AttemptOutcome>
  } finally {
    await rm(directory, { recursive: true, force: true })
  }
}

interface Received {
  headers: IncomingHttpHeaders
  body: string
}

/** A receiver on `host` that answers each request with the next of `answers` (the last one repeats). */
class Receiver {
  readonly received: Received[] = []
  answers: { status: number; headers?: Record<string, string>; hang?: boolean }[] = [{ status: 200 }]
  private server: Server | undefined

  async start(host: string): Promise<string> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = []
      request.on('data', (chunk: Buffer) => chunks.push(chunk))
      request.on('end', () => {
        this.received.push({ headers: request.headers, body: Buffer.concat(chunks).toString() })
        const answer = this.answers.length > 1 ? this.answers.shift()! : this.answers[0]!
        if (answer.hang) return
        response.writeHead(answer.status, answer.headers).end('answer from the receiver')
      })
    })
    await new Promise<void>((resolve) => this.server!.listen(0, host, resolve))
    return `http://${host}:${(this.server!.address() as AddressInfo).port}/hook`
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections()
    await new Promise((resolve) => this.server?.close(resolve))
  }
}

async function register(t: TestApp, user: SignedInUser, body: object) {
  return t.app.inject({ method: 'POST', url: '/api/webhooks', headers: user.headers, payload: body })
}

async function attemptsOf(t: TestApp, user: SignedInUser, id: string) {
  const response = await t.app.inject({ url: `/api/webhooks/${id}/attempts`, headers: user.headers })
  expect(response.statusCode).toBe(200)
  return response.json().attempts as {
    eventId: string
    type: string
    attempt: number
    status: string
    response: string
  }[]
}

describe('webhooks', () => {
  let t: TestApp
  let user: SignedInUser
  const receiver = new Receiver()
  let url: string

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        WEBHOOK_DISPATCH_INTERVAL_MS: '0',
        WEBHOOK_RETRY_DELAYS_SECONDS: '1,1',
        WEBHOOK_TIMEOUT_MS: '500',
        // Loopback but for 127.0.0.2, where the receivers listen: 127.0.0.1 stands for a private address.
        WEBHOOK_ALLOWED_NETWORKS: '127.0.0.2/32',
      },
    })
    user = await signInTestUser(t)
    url = await receiver.start('127.0.0.2')
  })
  afterAll(async () => {
    await receiver.stop()
    await t?.close()
  })
  afterEach(async () => {
    // Each test starts with the receiver answering 200 and no endpoint left to deliver to.
    receiver.answers = [{ status: 200 }]
    receiver.received.length = 0
    await t.database.handle.db.execute(sql`DELETE FROM webhooks WHERE user_id = ${user.id}`)
  })

  it('register an endpoint with a secret shown once, and list it without', async () => {
    const created = await register(t, user, { url, events: ['anchor.confirmed'], description: 'my receiver' })
    expect(created.statusCode).toBe(201)
    const webhook = created.json()
    expect(webhook).toMatchObject({ url, events: ['anchor.confirmed'], status: 'enabled', disabledReason: null })
    expect(webhook.secret).toMatch(/^whsec_/)
    const listed = await t.app.inject({ url: '/api/webhooks', headers: user.headers })
    const { secret: _secret, ...withoutSecret } = webhook
    expect(listed.json().webhooks).toEqual([withoutSecret])
    expect(listed.body).not.toContain(webhook.secret)
    // Published before the first delivery, so that a receiver that fetched them first can verify it.
    const keys = (await t.app.inject({ url: '/.well-known/webhook-keys' })).json().keys
    expect(keys).toEqual([expect.objectContaining({ alg: 'Ed25519', publicKey: expect.stringMatching(/^whpk_/) })])
    const other = await signInTestUser(t)
    expect((await t.app.inject({ url: `/api/webhooks/${webhook.id}`, headers: other.headers })).statusCode).toBe(404)
  })

  it('refuse URLs the service may not call, changing nothing', async () => {
    for (const refused of [
      'ftp://127.0.0.2/hook',
      'http://127.0.0.1/hook',
      'http://[::ffff:127.0.0.1]/hook',
      'http://[::1]/hook',
      'http://10.1.2.3/hook',
      'http://169.254.169.254/latest/meta-data',
      'http://user:pass@127.0.0.2/hook',
      'not a url',
    ]) {
      const response = await register(t, user, { url: refused })
      expect({ refused, status: response.statusCode }).toEqual({ refused, status: 400 })
      expect(response.json().code).toMatch(/^(WEBHOOK_URL_REFUSED|VALIDATION_FAILED)$/)
    }
    expect((await t.app.inject({ url: '/api/webhooks', headers: user.headers })).json().webhooks).toEqual([])
  })

  it('deliver each event once, signed for both kinds of verifier', async () => {
    const { secret } = (await register(t, user, { url })).json()
    const txHash = await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    await t.app.webhookDispatcher.tick()
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    const headers = delivery!.headers as Record<string, string>
    const event = new Webhook(secret).verify(delivery!.body, headers)
    const keys = (await t.app.inject({ url: '/.well-known/webhook-keys' })).json().keys
    expect(keys).toEqual([expect.objectContaining({ alg: 'Ed25519', publicKey: expect.stringMatching(/^whpk_/) })])
    const publicKeys = keys.map((key: { publicKey: string }) => key.publicKey)
    expect(await verifyWebhook(delivery!.body, headers, { publicKeys })).toEqual(event)
    const feed = (await t.app.inject({ url: '/api/events', headers: user.headers })).json().events
    const fed = feed.find((e: { data: { txHash: string } }) => e.data.txHash === txHash)
    expect(headers['webhook-id']).toBe(fed.id)
    expect(event).toEqual({ type: 'anchor.confirmed', timestamp: fed.timestamp, data: fed.data })
  })

  it('keep their log WEBHOOK_LOG_RETENTION_DAYS: older attempts and finished deliveries go, pending ones stay', async () => {
    const { id } = (await register(t, user, { url })).json()
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    receiver.answers = [{ status: 500 }]
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    const db = t.database.handle.db
    // Everything 31 days old: the delivered one and both attempts go; the failing one, still to be tried, stays.
    await db.execute(sql`UPDATE webhook_attempts SET at = now() - interval '31 days' WHERE webhook_id = ${id}`)
    await db.execute(
      sql`UPDATE webhook_deliveries SET created_at = now() - interval '31 days' WHERE webhook_id = ${id}`,
    )
    expect(await pruneWebhookLog(db, t.config.webhooks.logRetentionDays)).toMatchObject({ attempts: 2, deliveries: 1 })
    expect(await attemptsOf(t, user, id)).toEqual([])
    const left = await query<{ status: string }>(
      db,
      sql`SELECT status FROM webhook_deliveries WHERE webhook_id = ${id}`,
    )
    expect(left).toEqual([{ status: 'pending' }])
    expect(await pruneWebhookLog(db, t.config.webhooks.logRetentionDays)).toEqual({
      attempts: 0,
      deliveries: 0,
      notices: 0,
    })
  })

  it('try a failing endpoint again on the schedule, and log every attempt', async () => {
    const { id } = (await register(t, user, { url })).json()
    receiver.answers = [{ status: 500 }, { status: 302, headers: { location: 'http://127.0.0.1/' } }, { status: 204 }]
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    expect(await t.app.webhookDispatcher.tick()).toBe(0) // not due again for a second
    for (let i = 0; i < 2; i++) {
      await new Promise((resolve) => setTimeout(resolve, 1_200))
      await t.app.webhookDispatcher.tick()
    }
    expect(receiver.received).toHaveLength(3)
    expect(new Set(receiver.received.map((r) => r.headers['webhook-id'])).size).toBe(1)
    const attempts = await attemptsOf(t, user, id)
    expect(attempts.map((a) => [a.attempt, a.status])).toEqual([
      [3, '204'],
      [2, '302'],
      [1, '500'],
    ])
    expect(attempts[2]!.response).toBe('answer from the receiver')
  })

  it('give up after the schedule, and deliver again on a replay', async () => {
    const { id } = (await register(t, user, { url })).json()
    receiver.answers = [{ status: 503 }]
    await relayMined(t.app, user.headers, newBody())
    for (let i = 0; i < 4; i++) {
      await t.app.webhookDispatcher.tick()
      await new Promise((resolve) => setTimeout(resolve, 1_200))
    }
    expect(receiver.received).toHaveLength(3)
    receiver.answers = [{ status: 200 }]
    const since = new Date(Date.now() - 60_000).toISOString()
    const replayed = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/${id}/replay`,
      headers: user.headers,
      payload: { since },
    })
    expect(replayed.json()).toEqual({ queued: 1 })
    await t.app.webhookDispatcher.tick()
    expect((await attemptsOf(t, user, id))[0]).toMatchObject({ attempt: 1, status: '200' })
  })

  it('wait as long as Retry-After asks', async () => {
    const { id } = (await register(t, user, { url })).json()
    receiver.answers = [{ status: 429, headers: { 'retry-after': '30' } }]
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    const [delivery] = await query<{ wait: number }>(
      t.database.handle.db,
      sql`SELECT extract(epoch FROM next_attempt_at - now()) AS wait FROM webhook_deliveries WHERE webhook_id = ${id}`,
    )
    expect(Number(delivery!.wait)).toBeGreaterThan(25)
  })

  it('count a receiver that does not answer in time as a timeout', async () => {
    const { id } = (await register(t, user, { url })).json()
    receiver.answers = [{ status: 200, hang: true }]
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    expect((await attemptsOf(t, user, id))[0]).toMatchObject({ status: 'timeout' })
  })

  it('disable an endpoint that answers 410 Gone, and send it nothing more', async () => {
    const { id } = (await register(t, user, { url })).json()
    receiver.answers = [{ status: 410 }]
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    const webhook = (await t.app.inject({ url: `/api/webhooks/${id}`, headers: user.headers })).json()
    expect(webhook).toMatchObject({ status: 'disabled', disabledReason: 'gone' })
    await relayMined(t.app, user.headers, newBody())
    await t.app.webhookDispatcher.tick()
    expect(receiver.received).toHaveLength(1)
  })

  it('send a test event to one endpoint, and sign with both secrets for a day after a rotation', async () => {
    const first = (await register(t, user, { url })).json()
    await register(t, user, { url: `${url}/other`, events: ['anchor.failed'] })
    const rotated = await t.app.inject({
      method: 'POST',
      url: `/api/webhooks/${first.id}/rotate-secret`,
      headers: user.headers,
    })
    const { secret } = rotated.json()
    expect(secret).not.toBe(first.secret)
    const tested = await t.app.inject({ method: 'POST', url: `/api/webhooks/${first.id}/test`, headers: user.headers })
    expect(tested.statusCode).toBe(202)
    await t.app.webhookDispatcher.tick()
    expect(receiver.received).toHaveLength(1)
    const [delivery] = receiver.received
    const headers = delivery!.headers as Record<string, string>
    for (const key of [first.secret, secret]) {
      expect(new Webhook(key).verify(delivery!.body, headers)).toMatchObject({ type: 'webhook.test' })
    }
    // The feed shows it too, naming the webhook.
    await expect
      .poll(async () => (await t.app.inject({ url: '/api/events', headers: user.headers })).json().events, {
        timeout: 15_000,
      })
      .toContainEqual(expect.objectContaining({ type: 'webhook.test', data: { webhookId: first.id } }))
  })
})

describe('outgoing requests', () => {
  const policy = { allowedNetworks: [], httpsOnly: false, timeoutMs: 1_000 }

  it('refuse private, loopback, link-local and reserved addresses in every spelling', () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.5',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '::1',
      '::ffff:127.0.0.1',
      '::ffff:10.0.0.1',
      '64:ff9b::a00:1',
      'fc00::1',
      'fe80::1',
    ]) {
      expect({ address, allowed: addressAllowed(address, policy) }).toEqual({ address, allowed: false })
    }
    expect(addressAllowed('93.184.216.34', policy)).toBe(true)
    expect(addressAllowed('2606:2800:220:1:248:1893:25c8:1946', policy)).toBe(true)
  })

  it('check a name after it resolves: one that resolves to loopback is refused when connecting', async () => {
    const outcome = await postDelivery('http://localhost:9/hook', {}, '{}', policy)
    expect(outcome).toMatchObject({ kind: 'refused' })
  })

  it('refuse a name that resolves to a private address, alone, beside a public one or IPv4-mapped', async () => {
    // Real name resolution (getaddrinfo) in a process that sees its own /etc/hosts: no DNS server is reachable here.
    const hosts = [
      '10.0.0.5 internal.test',
      '93.184.216.34 mixed.test',
      '10.0.0.6 mixed.test',
      '::ffff:10.0.0.7 mapped.test',
    ]
    const names = ['internal.test', 'mixed.test', 'mapped.test']
    const refused = await postFromOwnHosts(hosts, names, policy)
    for (const name of names) {
      expect({ name, ...refused[name] }).toEqual({
        name,
        kind: 'refused',
        response: `${name} resolves to an address the service may not call`,
      })
    }
    // The operator's list lets one through: the attempt is made (and fails, as 10.0.0.5 is nobody here).
    const listed = await postFromOwnHosts(hosts, ['internal.test'], {
      ...policy,
      allowedNetworks: [ipaddr.parseCIDR('10.0.0.0/8')],
      timeoutMs: 300,
    })
    expect(listed['internal.test']?.kind).not.toBe('refused')
  })
})
