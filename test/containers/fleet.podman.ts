// deploy/compose.yaml under a real engine (podman-compose on podman and runc), from a copy of deploy/ with secrets of
// its own, as docs/operations.md says to start it: the fleet comes up, a signer signs in (the code from the mail
// catcher) and relays through HAProxy, verifications answer; then an instance is killed, one is replaced as an upgrade
// does, and the PostgreSQL primary is killed, its standby promoted and the old primary started again (it refuses to be
// a second one), while relays go on; at the end every acknowledged anchor is on chain exactly once, under the
// transaction hash the service answered.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { cp, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { createPublicClient, getAbiItem, type Hex, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'
import { DEMO_IMAGE } from './images.ts'
import { podman, podmanEnv, waitFor } from './podman.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const PROJECT = `anchorfleet${process.pid}`
const CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3'
const ZERO_TX_HASH = `0x${'0'.repeat(64)}`
const execFileAsync = promisify(execFile)

interface Acknowledged {
  compositeHash: Hex
  txHash: Hex
}

describe('deploy/compose.yaml under podman-compose', () => {
  let dir: string
  let env: NodeJS.ProcessEnv
  let base: string
  let rpc: string
  let token: string
  const acknowledged: Acknowledged[] = []

  const compose = async (args: string[], timeoutMs = 300_000) =>
    (
      await execFileAsync('podman-compose', ['-p', PROJECT, '-f', join(dir, 'deploy/compose.yaml'), ...args], {
        env,
        timeout: timeoutMs,
        maxBuffer: 64 * 1024 * 1024,
      })
    ).stdout
  const container = (service: string) => `${PROJECT}_${service}_1`

  /** Relays a new first signature through the balancer until it is acknowledged with its transaction hash. */
  async function relay(): Promise<Acknowledged> {
    const body = {
      compositeHash: `0x${randomBytes(32).toString('hex')}` as Hex,
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: randomBytes(60).toString('base64url'),
    }
    const txHash = await waitFor(
      'a relay acknowledged',
      async () => {
        const response = await fetch(`${base}/api/relay`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify(body),
        })
        // A repeat of the same body is the same anchor: 5xx during a fault is retried as a client does.
        return response.status === 200 || response.status === 201 || response.status === 202
          ? ((await response.json()) as { txHash: Hex }).txHash
          : undefined
      },
      120_000,
    )
    const anchor = { compositeHash: body.compositeHash, txHash }
    acknowledged.push(anchor)
    return anchor
  }

  async function verified(anchor: Acknowledged): Promise<void> {
    const answer = await waitFor(
      `${anchor.txHash} verified`,
      async () => {
        const response = await fetch(`${base}/api/verify/${anchor.txHash}`)
        return response.ok ? ((await response.json()) as { compositeHash: string }) : undefined
      },
      120_000,
    )
    expect(answer.compositeHash).toBe(anchor.compositeHash)
  }

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'anchor-fleet-'))
    await cp(join(ROOT, 'deploy'), join(dir, 'deploy'), { recursive: true })
    await rm(join(dir, 'deploy/secrets'), { recursive: true, force: true })
    await execFileAsync(join(dir, 'deploy/container/make-secrets.sh'))
    const [http, chain, prometheus] = await Promise.all([closedPort(), closedPort(), closedPort()])
    env = {
      ...podmanEnv(),
      ANCHOR_HTTP_PORT: String(http),
      CHAIN_PORT: String(chain),
      PROMETHEUS_PORT: String(prometheus),
    }
    base = `http://127.0.0.1:${http}`
    rpc = `http://127.0.0.1:${chain}`
    // The demonstration image under the name the compose file gives it.
    await podman(['tag', DEMO_IMAGE, 'localhost/docanchor-demo:latest'])
    const started = performance.now()
    await compose(['up', '-d'])
    await waitFor(
      'the fleet ready behind HAProxy',
      async () => ((await fetch(`${base}/readyz`)).ok ? true : undefined),
      300_000,
    )
    console.log(`podman-compose up to ready through HAProxy: ${((performance.now() - started) / 1000).toFixed(0)} s`)
  })

  afterAll(async () => {
    if (!dir) return
    await compose(['down', '-v']).catch(() => {})
    await podman(['network', 'rm', '-f', `${PROJECT}_default`]).catch(() => {})
    await rm(dir, { recursive: true, force: true })
  })

  it('signs a signer in with the mailed code, relays and verifies through HAProxy', async () => {
    const email = `fleet-${randomBytes(4).toString('hex')}@example.com`
    const post = (path: string, body: unknown) =>
      fetch(`${base}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      })
    // As a user asks again when no code came: the first may go while the mail catcher is still starting.
    const code = await waitFor(
      'a sign-in code at the mail catcher',
      async () => {
        expect((await post('/api/auth/magic-link', { email })).status).toBe(202)
        return await waitFor(
          'the code of this request',
          // The newest: a code asked for again replaces the one before.
          async () => [...(await podman(['logs', container('mail')])).matchAll(/sign-in code is (\d{6})/g)].at(-1)?.[1],
          10_000,
        )
      },
      60_000,
    )
    token = ((await (await post('/api/auth/magic-link/verify', { email, code })).json()) as { token: string }).token
    expect(token).toBeTruthy()
    await verified(await relay())
    // The secrets are files: none is in an instance's environment listing.
    const inspected = await podman(['inspect', '--format', '{{json .Config.Env}}', container('anchor1')])
    for (const secret of ['jwt_secret', 'metrics_token', 'database_url', 'pkcs11_pin', 'relayer_private_key']) {
      expect(inspected).not.toContain((await execFileAsync('cat', [join(dir, 'deploy/secrets', secret)])).stdout)
    }
  })

  it('has Prometheus scrape every instance with the fleet’s token and load the shipped alert rules', async () => {
    const prometheus = `http://127.0.0.1:${env.PROMETHEUS_PORT}`
    const targets = await waitFor(
      'every instance scraped',
      async () => {
        const { data } = (await (await fetch(`${prometheus}/api/v1/targets`)).json()) as {
          data: { activeTargets: { labels: { job: string; instance: string }; health: string }[] }
        }
        const { activeTargets: found } = data
        return found.length === 3 && found.every((target) => target.health === 'up') ? found : undefined
      },
      90_000,
    )
    expect(targets.map((target) => `${target.labels.job} ${target.labels.instance}`).sort()).toEqual([
      'anchor anchor1:3000',
      'anchor anchor2:3000',
      'anchor anchor3:3000',
    ])
    const rules = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as {
      data: { groups: { rules: unknown[] }[] }
    }
    expect(rules.data.groups.flatMap((group) => group.rules).length).toBeGreaterThan(0)
  })

  it('keeps relaying and verifying with an instance killed', async () => {
    await podman(['kill', container('anchor2')])
    for (let i = 0; i < 6; i++) await verified(await relay())
  })

  it('replaces an instance as an upgrade does (stop, remove, up again) without a failed request', async () => {
    let failed = 0
    let checking = true
    const checks = (async () => {
      while (checking) {
        // Answered by an instance every time (HAProxy caches verifications only).
        const response = await fetch(`${base}/api/info`)
        await response.arrayBuffer()
        if (!response.ok) failed += 1
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })()
    await podman(['stop', '-t', '15', container('anchor1')])
    await podman(['rm', container('anchor1')])
    await compose(['up', '-d', '--no-deps', 'anchor1'])
    await waitFor(
      'the new anchor1 ready',
      async () => ((await podman(['healthcheck', 'run', container('anchor1')]).then(() => true)) ? true : undefined),
      120_000,
    )
    // Then the new container alone serves (anchor2 was killed before, anchor3 goes now): HAProxy found it again by
    // name, at whatever address it got.
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    await podman(['stop', '-t', '15', container('anchor3')])
    await new Promise((resolve) => setTimeout(resolve, 3_000))
    checking = false
    await checks
    expect(failed).toBe(0)
    expect((await fetch(`${base}/api/info`)).status).toBe(200)
  })

  it('keeps relaying after the PostgreSQL primary is killed and the standby promoted', async () => {
    await podman(['kill', container('postgres-primary')])
    await podman([
      ...['exec', '-u', 'postgres', container('postgres-standby')],
      ...['pg_ctl', 'promote', '-w', '-D', '/var/lib/postgresql/data'],
    ])
    for (let i = 0; i < 6; i++) await verified(await relay())
    // The old primary started again by mistake does not become a second primary: it stops, and the fleet goes on.
    await podman(['start', container('postgres-primary')])
    await waitFor(
      'the old primary refusing to start as a second one',
      async () =>
        (await podman(['inspect', '--format', '{{.State.Status}}', container('postgres-primary')])).trim() === 'exited'
          ? true
          : undefined,
      30_000,
    )
    expect(await podman(['logs', container('postgres-primary')])).toContain('is the primary now')
    await verified(await relay())
  })

  it('has every acknowledged anchor on chain exactly once, under the hash the service answered', async () => {
    const chain = createPublicClient({ transport: http(rpc) })
    const logs = await chain.getLogs({
      address: CONTRACT,
      event: getAbiItem({ abi: documentAnchorsAbi, name: 'DocumentAnchored' }),
      fromBlock: 0n,
      toBlock: 'latest',
    })
    for (const anchor of acknowledged) {
      const onChain = logs.filter((log) => log.args.compositeHash === anchor.compositeHash)
      expect(onChain.map((log) => log.transactionHash)).toEqual([anchor.txHash])
    }
    expect(acknowledged).toHaveLength(14)
  })
})
