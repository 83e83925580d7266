// Relay throughput and latency through the real HTTP server (50 concurrent clients, each its own user), as a ratio
// against a bare viem loop that sends the same contract call with manual nonces to the same anvil in the same run;
// both on automine and on `--block-time 1`. Also the database time per relay (sequential relays, wall time during
// which a database call is in flight), next to its floor: the same number of bare `SELECT 1` round trips.
// PGlite by default; PostgreSQL when DATABASE_URL is set. Traffic only to 127.0.0.1; bounded in time.
// The service runs in a child process; the load generator and the floor's bare loop run in this one.
import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { toBase64Url, ZERO_TX_HASH } from '@docanchor/client'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import pino from 'pino'
import { type Address, type Hex, parseGwei, WaitForTransactionReceiptTimeoutError } from 'viem'
import { buildApp } from '../src/api/app.ts'
import { startSession } from '../src/auth/sessions.ts'
import { anvilAccount } from '../src/chain/anvil-accounts.ts'
import { createChainClient } from '../src/chain/chain-client.ts'
import { documentAnchorsAbi } from '../src/chain/document-anchors-artifact.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { type DatabaseHandle, openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import { startTestChain, type TestChain } from '../test/helpers/chain/anvil.ts'
import { createThrowawayDatabase } from '../test/helpers/db/throwaway-postgres.ts'

const CLIENTS = 50
/** Transactions per round and side; floor and relay alternate over the rounds and each reports its median round. */
const AUTOMINE_TXS = 400
const BLOCK_TIME_TXS = 150
const ROUNDS = 5
const SEQUENTIAL_RELAYS = 200
const JWT_SECRET = randomBytes(32).toString('hex')
/** The service relays as account 0 (owner and first relayer); the bare loop sends as account 1. */
const SERVICE_ACCOUNT = 0
const BARE_ACCOUNT = 1
/** A bare send still unmined after this long hit anvil's automine stall (see DESIGN.md). */
const BARE_STALL_MS = 3_000

interface Figures {
  perSecond: number
  p50: number
  p99: number
  max: number
  errors: number
  /** Bare sends that hit anvil's automine stall and were replaced to free it. */
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
  const args = [hash(), ZERO_TX_HASH] as const
  // Fees in tenths of the base fees: a replacement must pay at least 10 % more than what it replaces.
  const send = (tenths: bigint) =>
    chain.walletClient(BARE_ACCOUNT).writeContract({
      address: chain.contract,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args,
      nonce,
      gas: 40_000n,
      maxFeePerGas: (parseGwei('5') * tenths) / 10n,
      maxPriorityFeePerGas: (parseGwei('1') * tenths) / 10n,
    })
  const hashes = [await send(10n)]
  try {
    return await chain.publicClient.waitForTransactionReceipt({
      hash: hashes[0]!,
      pollingInterval: 20,
      timeout: BARE_STALL_MS,
    })
  } catch (error) {
    if (!(error instanceof WaitForTransactionReceiptTimeoutError)) throw error
  }
  for (let attempt = 1; attempt <= 3; attempt++) {
    counter.stalls += 1
    // Freed the way the relayer frees it: the same nonce again at a higher fee. If the first got mined meanwhile, the
    // node refuses the replacement and the wait finds the first.
    const replacement = await send(10n + 2n * BigInt(attempt)).catch(() => undefined)
    if (replacement) hashes.push(replacement)
    const receipt = await firstReceipt(chain, hashes, BARE_STALL_MS)
    if (receipt) return receipt
  }
  throw new Error(`the bare transaction with nonce ${nonce} was never mined`)
}

/** The receipt of whichever of `hashes` is mined first, polled every 20 ms; undefined after `timeoutMs`. */
async function firstReceipt(chain: TestChain, hashes: Hex[], timeoutMs: number) {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    for (const txHash of hashes) {
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: txHash }).catch(() => undefined)
      if (receipt) return receipt
    }
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return undefined
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
      previousTxHash: ZERO_TX_HASH,
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

/** The round of median throughput. */
function median(rounds: Figures[]): Figures {
  return [...rounds].sort((a, b) => a.perSecond - b.perSecond)[Math.floor(rounds.length / 2)]!
}

function line(label: string, figures: Figures, floor?: Figures): void {
  const ratio = floor ? `  ratio ${(figures.perSecond / floor.perSecond).toFixed(2)}` : ''
  const stalls = figures.stalls > 0 ? `  (${figures.stalls} automine stalls freed by a replacement)` : ''
  console.log(
    `${label.padEnd(34)} ${figures.perSecond.toFixed(0).padStart(5)} tx/s  p50 ${figures.p50.toFixed(1).padStart(7)} ms  ` +
      `p99 ${figures.p99.toFixed(1).padStart(7)} ms  max ${figures.max.toFixed(0).padStart(5)} ms  errors ${figures.errors}${ratio}${stalls}`,
  )
}

async function scenario(label: string, blockTime: number | undefined, total: number): Promise<void> {
  const chain = await startTestChain({
    relayers: [anvilAccount(BARE_ACCOUNT).address],
    // Recent blocks only: else anvil slows down round after round, and the last rounds measure its history.
    anvil: { recentOnly: true, ...(blockTime !== undefined && { blockTime }) },
  })
  const params: ServeParams = { rpcUrl: chain.rpcUrl, chainId: chain.chain.id, contract: chain.contract }
  const child = spawn(
    process.execPath,
    [
      '--conditions=@docanchor/source',
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
    // First, while the chain is short: anvil slows down as blocks pile up, and one client feels it most.
    const printSequential = blockTime === undefined ? await sequentialFigures(chain, ready, child) : undefined
    const floors: Figures[] = []
    const relays: Figures[] = []
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating the order cancels what going first does; the median round sets aside one hit by anvil's stall.
      if (round % 2 === 0) floors.push(await bareLoop(chain, total))
      relays.push(await relayLoad(ready, total))
      if (round % 2 === 1) floors.push(await bareLoop(chain, total))
    }
    const floor = median(floors)
    const relay = median(relays)
    console.log(
      `\n${label} (${ROUNDS} rounds of ${total} transactions, ${CLIENTS} concurrent clients, ${ready.databaseKind}; ` +
        `median round shown)`,
    )
    line('bare viem loop (floor)', floor)
    line('POST /api/relay → 201', relay, floor)
    const rate = (figures: Figures[]) => figures.map((f) => f.perSecond.toFixed(0)).join(' / ')
    console.log(`  rounds, tx/s: floor ${rate(floors)}; relay ${rate(relays)}`)
    if (printSequential) printSequential()
  } finally {
    if (child.connected) child.send({ type: 'stop' })
    if (child.exitCode === null) await new Promise((resolve) => child.once('exit', resolve))
    await chain.stop()
  }
}

/** One client at a time, bare and relayed, and the database time per relay; returns the printing of the figures. */
async function sequentialFigures(chain: TestChain, ready: ServerReady, child: ChildProcess): Promise<() => void> {
  // Latency without queueing (at 50 in flight it is mostly waiting for anvil's turn).
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
  return () => {
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
