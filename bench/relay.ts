// Relay throughput and latency through the real HTTP server (50 concurrent clients, each its own user), as a ratio
// against a bare viem loop that sends the same contract call with manual nonces to the same anvil in the same run;
// both on automine and on `--block-time 1`. Also the database time per relay (sequential relays, wall time during
// which a database call is in flight), next to its floor: the same number of bare `SELECT 1` round trips.
// PGlite by default; PostgreSQL when DATABASE_URL is set. Traffic only to 127.0.0.1; bounded in time.
// The service runs in a child process; the load generator and the floor's bare loop run in this one.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import pino from 'pino'
import { type Address, type Hex, parseGwei, WaitForTransactionReceiptTimeoutError } from 'viem'
import { buildApp } from '../src/api/app.ts'
import { startSession } from '../src/auth/sessions.ts'
import { anvilAccount } from '../src/chain/anvil-accounts.ts'
import { createChainClient } from '../src/chain/chain-client.ts'
import { documentAnchorsAbi } from '../src/chain/document-anchors-artifact.ts'
import { loadConfig } from '../src/config.ts'
import { type DatabaseHandle, openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import { toBase64Url } from '../src/formats/base64url.ts'
import { startTestChain, type TestChain } from '../test/helpers/anvil.ts'
import { createThrowawayDatabase } from '../test/helpers/throwaway-postgres.ts'

const CLIENTS = 50
const AUTOMINE_TXS = 1_000
const BLOCK_TIME_TXS = 300
const SEQUENTIAL_RELAYS = 200
const JWT_SECRET = randomBytes(32).toString('hex')
const ZERO = `0x${'0'.repeat(64)}` as Hex
/** The service relays as account 0 (owner and first relayer); the bare loop sends as account 1. */
const SERVICE_ACCOUNT = 0
const BARE_ACCOUNT = 1
/** A bare send still unmined after this long hit anvil's automine stall (see DESIGN.md): a mined block frees it. */
const BARE_STALL_MS = 3_000

interface Figures {
  perSecond: number
  p50: number
  p99: number
  max: number
  errors: number
  /** Bare sends that hit anvil's automine stall and needed a block mined by hand. */
  stalls: number
}

const hash = (): Hex => `0x${randomBytes(32).toString('hex')}`
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** `total` jobs over `CLIENTS` concurrent workers; latency of each job, throughput of the whole. */
async function drive(total: number, job: (i: number) => Promise<boolean>, stalls = () => 0): Promise<Figures> {
  let next = 0
  let errors = 0
  const latencies: number[] = []
  const started = performance.now()
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now()
        if (!(await job(i))) errors += 1
        latencies.push(performance.now() - t0)
      }
    }),
  )
  const seconds = (performance.now() - started) / 1000
  latencies.sort((a, b) => a - b)
  return {
    perSecond: total / seconds,
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1]!,
    errors,
    stalls: stalls(),
  }
}

/** The floor: viem signs and sends the same `anchor` call with manual nonces and waits for each receipt. */
async function bareLoop(chain: TestChain, total: number): Promise<Figures> {
  let nonce = await firstBareNonce(chain)
  const counter = { stalls: 0 }
  return drive(
    total,
    async () => (await sendBareAnchor(chain, nonce++, counter)).status === 'success',
    () => counter.stalls,
  )
}

function firstBareNonce(chain: TestChain): Promise<number> {
  return chain.publicClient.getTransactionCount({ address: chain.account(BARE_ACCOUNT).address, blockTag: 'pending' })
}

/** One `anchor` call signed by the bare account with an explicit nonce and fixed fees, waited for like the relay. */
async function sendBareAnchor(chain: TestChain, nonce: number, counter: { stalls: number }) {
  const txHash = await chain.walletClient(BARE_ACCOUNT).writeContract({
    address: chain.contract,
    abi: documentAnchorsAbi,
    functionName: 'anchor',
    args: [hash(), ZERO],
    nonce,
    gas: 40_000n,
    maxFeePerGas: parseGwei('5'),
    maxPriorityFeePerGas: parseGwei('1'),
  })
  try {
    return await chain.publicClient.waitForTransactionReceipt({
      hash: txHash,
      pollingInterval: 20,
      timeout: BARE_STALL_MS,
    })
  } catch (error) {
    if (!(error instanceof WaitForTransactionReceiptTimeoutError)) throw error
    counter.stalls += 1
    await chain.publicClient.request({ method: 'evm_mine' } as never)
    return chain.publicClient.waitForTransactionReceipt({ hash: txHash, pollingInterval: 20 })
  }
}

async function bareLoopSequential(chain: TestChain, total: number): Promise<Figures> {
  let nonce = await firstBareNonce(chain)
  const counter = { stalls: 0 }
  const latencies: number[] = []
  for (let i = 0; i < total; i++) {
    const t0 = performance.now()
    await sendBareAnchor(chain, nonce++, counter)
    latencies.push(performance.now() - t0)
  }
  latencies.sort((a, b) => a - b)
  return {
    perSecond: total / (latencies.reduce((a, b) => a + b, 0) / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1]!,
    errors: 0,
    stalls: counter.stalls,
  }
}

interface ServeParams {
  rpcUrl: string
  chainId: number
  contract: Address
}

interface ServerReady {
  url: string
  tokens: string[]
  databaseKind: DatabaseHandle['kind']
}

interface DatabaseBusy {
  ms: number
  calls: number
  /** One bare `SELECT 1` round trip, ms. */
  roundTripMs: number
}

if (process.argv.includes('--serve')) await serve(JSON.parse(process.argv[process.argv.indexOf('--serve') + 1]!))
else await measure()

/**
 * The service under test, in its own process so that the load generator does not share its event loop (a client
 * does not run inside the server; the floor's bare loop has a thread to itself too). Answers the parent over IPC.
 */
async function serve(params: ServeParams): Promise<void> {
  const throwaway = await throwawayDatabase()
  const config = loadConfig({
    JWT_SECRET,
    LOG_LEVEL: 'silent',
    DATABASE_URL: throwaway.url,
    PLANS: 'free:1000000',
    RELAY_PER_USER_PER_MINUTE: '1000000',
    RELAY_WAIT_MS: '30000',
    RELAY_MONITOR_INTERVAL_MS: '500',
    RELAY_STUCK_AFTER_MS: '3000',
  })
  const database = await openDatabase({ url: config.database.url })
  await migrateDatabase(database)
  const app = await buildApp({
    config,
    database,
    chain: {
      client: createChainClient({ rpcUrls: [params.rpcUrl], chainId: params.chainId, pollingIntervalMs: 20 }),
      chainId: params.chainId,
      contractAddress: params.contract,
      relayers: [anvilAccount(SERVICE_ACCOUNT)],
      publicRpcUrl: params.rpcUrl,
      explorerTxUrl: null,
    },
    logger: pino({ level: 'silent' }) as FastifyBaseLogger,
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const tokens: string[] = []
  for (let i = 0; i < CLIENTS; i++) {
    const email = `bench-${i}-${randomBytes(4).toString('hex')}@example.com`
    const [row] = await database.db.insert(users).values({ email }).returning()
    tokens.push((await startSession(database.db, app.deps.jwt, { id: row!.id, email }, 'email')).token)
  }
  let measuring: { stop(): DatabaseBusy } | undefined
  process.on('message', async (message: { type: string }) => {
    if (message.type === 'db-busy-start') {
      measuring = measureDatabaseBusy(database)
      process.send!({ type: 'db-busy-started' })
    }
    if (message.type === 'db-busy-stop') {
      const busy = measuring!.stop()
      busy.roundTripMs = await roundTripMs(database, 500)
      process.send!({ type: 'db-busy', busy })
    }
    if (message.type === 'stop') {
      await app.close()
      await database.close()
      await throwaway.drop()
      process.exit(0)
    }
  })
  const ready: ServerReady = { url, tokens, databaseKind: database.kind }
  process.send!({ type: 'ready', ready })
}

/** PostgreSQL: a throwaway database beside the one DATABASE_URL names, dropped afterwards. */
async function throwawayDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const adminUrl = loadConfig(process.env).database.url
  if (adminUrl === undefined) return { url: undefined, drop: async () => {} }
  return createThrowawayDatabase(adminUrl, 'anchor_bench')
}

async function relayOnce(ready: ServerReady, token: string): Promise<number> {
  const response = await fetch(`${ready.url}/api/relay`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      compositeHash: hash(),
      previousTxHash: ZERO,
      encryptedPayload: toBase64Url(randomBytes(60)),
    }),
  })
  await response.arrayBuffer()
  return response.status
}

async function relayLoad(ready: ServerReady, total: number): Promise<Figures> {
  return drive(total, async (i) => (await relayOnce(ready, ready.tokens[i % CLIENTS]!)) === 201)
}

/** Starts counting the wall time during which at least one database call is in flight. */
function measureDatabaseBusy(database: DatabaseHandle): { stop(): DatabaseBusy } {
  let inFlight = 0
  let since = 0
  let busy = 0
  let calls = 0
  const enter = () => {
    calls += 1
    if (inFlight++ === 0) since = performance.now()
  }
  const leave = () => {
    if (--inFlight === 0) busy += performance.now() - since
  }
  const wrap = (target: object, name: string) => {
    const record = target as Record<string, (...args: unknown[]) => Promise<unknown>>
    const original = record[name]!
    record[name] = async function (this: unknown, ...args: unknown[]) {
      enter()
      try {
        return await original.apply(this, args)
      } finally {
        leave()
      }
    }
    return () => {
      record[name] = original
    }
  }
  // Statements inside a transaction run within the timed transaction call and are not counted twice.
  const restore =
    database.kind === 'pglite'
      ? [wrap(database.pglite, 'query'), wrap(database.pglite, 'transaction')]
      : [wrap(pg.Client.prototype, 'query')]
  return {
    stop() {
      for (const undo of restore) undo()
      return { ms: busy, calls, roundTripMs: 0 }
    },
  }
}

async function roundTripMs(database: DatabaseHandle, count: number): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    if (database.kind === 'pglite') await database.pglite.query('SELECT 1')
    else await database.pool.query('SELECT 1')
  }
  return (performance.now() - started) / count
}

function line(label: string, figures: Figures, floor?: Figures): void {
  const ratio = floor ? `  ratio ${(figures.perSecond / floor.perSecond).toFixed(2)}` : ''
  const stalls = figures.stalls > 0 ? `  (${figures.stalls} automine stalls freed by hand)` : ''
  console.log(
    `${label.padEnd(34)} ${figures.perSecond.toFixed(0).padStart(5)} tx/s  p50 ${figures.p50.toFixed(1).padStart(7)} ms  ` +
      `p99 ${figures.p99.toFixed(1).padStart(7)} ms  max ${figures.max.toFixed(0).padStart(5)} ms  errors ${figures.errors}${ratio}${stalls}`,
  )
}

async function scenario(label: string, blockTime: number | undefined, total: number): Promise<void> {
  const chain = await startTestChain({
    relayers: [anvilAccount(BARE_ACCOUNT).address],
    anvil: blockTime === undefined ? {} : { blockTime },
  })
  const params: ServeParams = { rpcUrl: chain.rpcUrl, chainId: chain.chain.id, contract: chain.contract }
  const child = spawn(
    process.execPath,
    [
      ...(process.env.BENCH_PROF ? ['--cpu-prof', '--cpu-prof-dir=/tmp/prof2'] : []),
      '--import',
      'tsx',
      fileURLToPath(import.meta.url),
      '--serve',
      JSON.stringify(params),
    ],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  )
  try {
    const { ready } = await nextMessage<{ ready: ServerReady }>(child, 'ready')
    // Warm both paths (JIT, fee cache, nonce row, connections) before measuring.
    await bareLoop(chain, CLIENTS)
    await relayLoad(ready, CLIENTS)
    const floor = await bareLoop(chain, total)
    const relay = await relayLoad(ready, total)
    console.log(`\n${label} (${total} transactions, ${CLIENTS} concurrent clients, ${ready.databaseKind})`)
    line('bare viem loop (floor)', floor)
    line('POST /api/relay → 201', relay, floor)
    if (blockTime === undefined) {
      // One client at a time: latency without queueing (at 50 in flight it is mostly waiting for anvil's turn).
      const single = await bareLoopSequential(chain, SEQUENTIAL_RELAYS)
      const token = ready.tokens[0]!
      const latencies: number[] = []
      child.send({ type: 'db-busy-start' })
      await nextMessage(child, 'db-busy-started')
      for (let i = 0; i < SEQUENTIAL_RELAYS; i++) {
        const t0 = performance.now()
        await relayOnce(ready, token)
        latencies.push(performance.now() - t0)
      }
      child.send({ type: 'db-busy-stop' })
      const { busy } = await nextMessage<{ busy: DatabaseBusy }>(child, 'db-busy')
      latencies.sort((a, b) => a - b)
      const sequential: Figures = {
        perSecond: SEQUENTIAL_RELAYS / (latencies.reduce((a, b) => a + b, 0) / 1000),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies[latencies.length - 1]!,
        errors: 0,
        stalls: 0,
      }
      line('bare viem loop, 1 client', single)
      line('POST /api/relay, 1 client', sequential, single)
      const perRelay = busy.ms / SEQUENTIAL_RELAYS
      const calls = busy.calls / SEQUENTIAL_RELAYS
      const floorMs = busy.roundTripMs * calls
      console.log(
        `database time per relay (sequential) ${perRelay.toFixed(2)} ms in ${calls.toFixed(1)} calls; ` +
          `floor ${floorMs.toFixed(2)} ms (as many SELECT 1); ratio ${(floorMs / perRelay).toFixed(2)}`,
      )
    }
  } finally {
    if (child.connected) child.send({ type: 'stop' })
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
    await chain.stop()
  }
}

function nextMessage<T>(child: ChildProcess, type: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const onMessage = (message: { type: string }) => {
      if (message.type !== type) return
      child.off('message', onMessage)
      child.off('exit', onExit)
      resolve(message as T)
    }
    const onExit = (code: number | null) => reject(new Error(`the service process exited (${code})`))
    child.on('message', onMessage)
    child.once('exit', onExit)
  })
}

async function measure(): Promise<void> {
  const deadline = setTimeout(() => {
    console.error('bench/relay.ts: time limit reached')
    process.exit(1)
  }, 240_000)
  await scenario('automine', undefined, AUTOMINE_TXS)
  await scenario('--block-time 1', 1, BLOCK_TIME_TXS)
  clearTimeout(deadline)
}
