// The relay's promise on independent node implementations (Hardhat 3's EDR node, Ganache 7.9), with automine and with
// 2-second blocks, behind a JSON-RPC proxy that misbehaves as providers do on every tenth send: it forwards the send
// and drops the answer, refusing connections for a second; answers 429 or 503 with Retry-After; answers after the
// client gave up; answers a provider's error words for a send it forwarded. Clients repeat a request until it is
// confirmed, as the desktop app does (on 202 and on 502 alike). Then, from the chain and the database: no composite
// hash anchored twice, every acknowledged anchor on chain once under its answered hash, no anchor on chain without its
// record, no "confirmed" without the event, no reorg alert, no nonce gap left behind.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { rows } from '../../src/db/sql-rows.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type NodeKind, startOtherNode } from '../helpers/chain/other-nodes.ts'
import { type Interception, type RpcCall, type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { captureLogs, type LogCapture } from '../helpers/log-capture.ts'
import { type Acknowledged, relayPromiseBroken } from '../helpers/relay-invariants.ts'
import { newBody, postRelay, type RelayBody } from './relay-helpers.ts'

const CLIENT_TIMEOUT_MS = 1_500
const ANCHORS = 50
const CLIENTS = 10

/** The faults, one on every tenth send in turn. */
const SEND_FAULTS: [string, Interception][] = [
  ['forwarded, answer dropped, connections refused 1 s', { refuseConnectionsMs: 1_000 }],
  ['429 with Retry-After', { status: 429, retryAfterSeconds: 1 }],
  ['answered after the client gave up', { answerAfterMs: CLIENT_TIMEOUT_MS + 500 }],
  ['503 with Retry-After', { status: 503, retryAfterSeconds: 1 }],
  [
    "forwarded, answered in a provider's words",
    { rpcError: { code: -32000, message: 'upstream request timeout' }, forward: true },
  ],
]
/** Reads fail too, now and then: a failed read must never look like a reorg or a consumed nonce. */
const READ_METHODS = ['eth_getTransactionReceipt', 'eth_getBlockByNumber', 'eth_getTransactionByHash']

const scenarios: { name: string; kind: NodeKind; blockIntervalMs?: number }[] = [
  { name: 'Hardhat, automine', kind: 'hardhat' },
  { name: 'Hardhat, 2 s blocks', kind: 'hardhat', blockIntervalMs: 2_000 },
  { name: 'Ganache, automine', kind: 'ganache' },
  { name: 'Ganache, 2 s blocks', kind: 'ganache', blockIntervalMs: 2_000 },
]

describe.each(scenarios)('POST /api/relay on $name, behind a faulty provider', ({ kind, blockIntervalMs }) => {
  let chain: TestChain
  let proxy: RpcProxy
  let logs: LogCapture
  let t: TestApp
  let users: SignedInUser[]

  beforeAll(async () => {
    chain = await startTestChain({ node: () => startOtherNode(kind, { blockIntervalMs }) })
    proxy = await startRpcProxy(chain.rpcUrl)
    logs = captureLogs('info')
    t = await createTestApp({
      testChain: chain,
      logger: logs.logger,
      env: {
        RELAY_MONITOR_INTERVAL_MS: '250',
        RELAY_STUCK_AFTER_MS: '8000',
        RELAY_WAIT_MS: '5000',
        CHAIN_POLLING_INTERVAL_MS: '50',
      },
      chainContext: () => ({
        client: createChainClient({
          rpcUrls: [proxy.url],
          chainId: chain.chain.id,
          pollingIntervalMs: 50,
          timeoutMs: CLIENT_TIMEOUT_MS,
        }),
      }),
    })
    users = await Promise.all(Array.from({ length: CLIENTS }, () => signInTestUser(t)))
  }, 120_000)
  afterAll(async () => {
    await t?.close()
    await proxy?.close()
    await chain?.stop()
  })

  it('doubles nothing, orphans nothing, and confirms only what the chain holds', async () => {
    const injected = injectProviderFaults(proxy)

    const bodies = Array.from({ length: ANCHORS }, () => newBody())
    const acknowledged: Acknowledged[] = []
    const answers = new Map<number, number>()
    await Promise.all(
      users.map(async (user, client) => {
        for (let i = client; i < bodies.length; i += CLIENTS) {
          const txHash = await relayUntilConfirmed(t, user, bodies[i]!, (status) =>
            answers.set(status, (answers.get(status) ?? 0) + 1),
          )
          acknowledged.push({ compositeHash: bodies[i]!.compositeHash, txHash })
        }
      }),
    )
    proxy.intercept = undefined
    expect(acknowledged).toHaveLength(ANCHORS)
    // Every fault was met, so the run proves something.
    expect(injected.size, JSON.stringify([...injected])).toBe(SEND_FAULTS.length + 1)

    // Whatever is still open (a filler, a replacement) settles once the provider behaves.
    await expect.poll(() => openTransactions(t), { timeout: 30_000, interval: 250 }).toBe(0)
    const broken = await relayPromiseBroken({
      publicClient: chain.publicClient,
      contract: chain.contract,
      relayers: [chain.account(0).address],
      db: t.database.handle.db,
      acknowledged,
      logLines: logs.lines,
    })
    expect(broken, `answers: ${JSON.stringify([...answers])}`).toEqual([])
  }, 240_000)
})

/** Transactions not yet known mined, unsent fillers aside (the next relays reuse those). */
async function openTransactions(t: TestApp): Promise<number> {
  const [open] = await rows<{ n: unknown }>(
    t.database.handle.db,
    sql`SELECT count(*) AS n FROM relay_transactions
        WHERE status IN ('signed', 'broadcast') AND NOT (anchor_id IS NULL AND status = 'signed')`,
  )
  return Number(open?.n)
}

/** Every tenth send meets the next of SEND_FAULTS, every 25th read a 503; the faults met, by name. */
function injectProviderFaults(proxy: RpcProxy): Map<string, number> {
  const injected = new Map<string, number>()
  let sends = 0
  let reads = 0
  proxy.intercept = (calls: RpcCall[]) => {
    let fault: [string, Interception] | undefined
    // Counted per call: a client that batches several sends in one request meets the fault with all of them.
    const sent = calls.filter((call) => call.method === 'eth_sendRawTransaction').length
    if (sent > 0) {
      const tenth = Math.floor((sends + sent) / 10)
      if (tenth > Math.floor(sends / 10)) fault = SEND_FAULTS[(tenth - 1) % SEND_FAULTS.length]
      sends += sent
    } else if (calls.some((call) => READ_METHODS.includes(call.method))) {
      reads += 1
      if (reads % 25 === 0) fault = ['a read answered 503', { status: 503 }]
    }
    if (!fault) return undefined
    injected.set(fault[0], (injected.get(fault[0]) ?? 0) + 1)
    return fault[1]
  }
  return injected
}

/** What the desktop app does: repeats the same request until it is confirmed, on 202 and on 502 alike. */
async function relayUntilConfirmed(
  t: TestApp,
  user: SignedInUser,
  body: RelayBody,
  onAnswer: (status: number) => void,
): Promise<string> {
  const deadline = Date.now() + 120_000
  for (;;) {
    const response = await postRelay(t.app, user.headers, body)
    onAnswer(response.statusCode)
    if (response.statusCode === 200 || response.statusCode === 201) return response.json().txHash as string
    if (![202, 502, 503].includes(response.statusCode) || Date.now() > deadline) {
      throw new Error(`relay answered ${response.statusCode}: ${response.body}`)
    }
    await sleep(200)
  }
}

describe('POST /api/relay across node restarts', () => {
  it('never confirms on a Hardhat node restarted with an empty chain, and says the service is not ready', async () => {
    const chain = await startTestChain({ node: () => startOtherNode('hardhat') })
    let restarted: Awaited<ReturnType<typeof startOtherNode>> | undefined
    const t = await createTestApp({
      testChain: chain,
      env: { RELAY_MONITOR_INTERVAL_MS: '250', RELAY_WAIT_MS: '2000', CHAIN_POLLING_INTERVAL_MS: '50' },
    })
    try {
      const user = await signInTestUser(t)
      for (let i = 0; i < 5; i++) expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
      await chain.anvil.stop()
      restarted = await startOtherNode('hardhat', { port: chain.anvil.port })

      await expect.poll(async () => (await t.app.inject('/readyz')).json().checks?.contract).toBe('missing')
      const before = await rows<{ n: unknown }>(t.database.handle.db, sql`SELECT count(*) AS n FROM anchors`)
      const answers = await Promise.all(Array.from({ length: 20 }, () => postRelay(t.app, user.headers, newBody())))
      expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(502))
      expect(answers[0]!.json().detail).toContain('does not serve the anchoring contract')
      const after = await rows<{ n: unknown }>(t.database.handle.db, sql`SELECT count(*) AS n FROM anchors`)
      expect(after[0]!.n).toBe(before[0]!.n)
    } finally {
      await t.close()
      await restarted?.stop()
      await chain.stop()
    }
  }, 120_000)

  it('doubles nothing when Ganache restarts (its chain kept) while clients relay through the faulty provider', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ganache-'))
    const chain = await startTestChain({ node: () => startOtherNode('ganache', { databasePath: dir }) })
    const proxy = await startRpcProxy(chain.rpcUrl)
    let restarted: Awaited<ReturnType<typeof startOtherNode>> | undefined
    const logs = captureLogs('info')
    const t = await createTestApp({
      testChain: chain,
      logger: logs.logger,
      env: { RELAY_MONITOR_INTERVAL_MS: '250', RELAY_WAIT_MS: '3000', CHAIN_POLLING_INTERVAL_MS: '50' },
      chainContext: () => ({
        client: createChainClient({
          rpcUrls: [proxy.url],
          chainId: chain.chain.id,
          pollingIntervalMs: 50,
          timeoutMs: CLIENT_TIMEOUT_MS,
        }),
      }),
    })
    try {
      const injected = injectProviderFaults(proxy)
      const users = await Promise.all(Array.from({ length: CLIENTS }, () => signInTestUser(t)))
      const bodies = Array.from({ length: ANCHORS }, () => newBody())
      const acknowledged: Acknowledged[] = []
      let acknowledgedAtStop = 0
      const restart = (async () => {
        await expect.poll(() => acknowledged.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(15)
        acknowledgedAtStop = acknowledged.length
        await chain.anvil.stop()
        await sleep(1_000)
        restarted = await startOtherNode('ganache', { port: chain.anvil.port, databasePath: dir })
      })()
      await Promise.all(
        users.map(async (user, client) => {
          for (let i = client; i < bodies.length; i += users.length) {
            const txHash = await relayUntilConfirmed(t, user, bodies[i]!, () => {})
            acknowledged.push({ compositeHash: bodies[i]!.compositeHash, txHash })
          }
        }),
      )
      await restart
      proxy.intercept = undefined
      // The faulty provider did fault, so the run proves something.
      expect(injected.size, JSON.stringify([...injected])).toBeGreaterThan(0)
      await expect.poll(() => openTransactions(t), { timeout: 30_000, interval: 250 }).toBe(0)
      expect(acknowledgedAtStop).toBeLessThan(bodies.length - 10)
      const broken = await relayPromiseBroken({
        publicClient: chain.publicClient,
        contract: chain.contract,
        relayers: [chain.account(0).address],
        db: t.database.handle.db,
        acknowledged,
        logLines: logs.lines,
      })
      expect(broken).toEqual([])
    } finally {
      await t.close()
      await proxy.close()
      await restarted?.stop()
      await chain.stop()
      await rm(dir, { recursive: true, force: true })
    }
  }, 180_000)
})
