// Relay throughput and latency through the real HTTP server (50 concurrent clients, each its own user), as a ratio
// against a bare viem loop that sends the same contract call with manual nonces to the same anvil in the same run;
// both on automine and on `--block-time 1`. Also the database time per relay (sequential relays, wall time during
// which a database call is in flight), next to its floor: the same number of bare `SELECT 1` round trips.
// PGlite by default; PostgreSQL when DATABASE_URL is set. Traffic only to 127.0.0.1; bounded in time.
import { randomBytes } from 'node:crypto'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import pino from 'pino'
import { type Address, type Hex, parseGwei } from 'viem'
import { type AppInstance, buildApp } from '../src/api/app.ts'
import { startSession } from '../src/auth/sessions.ts'
import { documentAnchorsAbi } from '../src/chain/document-anchors-artifact.ts'
import { loadConfig } from '../src/config.ts'
import { type DatabaseHandle, openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import { toBase64Url } from '../src/formats/base64url.ts'
import { startTestChain, type TestChain, testChainContext } from '../test/helpers/anvil.ts'
import { createThrowawayDatabase } from '../test/helpers/throwaway-postgres.ts'

const CLIENTS = 50
const AUTOMINE_TXS = 1_000
const BLOCK_TIME_TXS = 300
const SEQUENTIAL_RELAYS = 200
const JWT_SECRET = randomBytes(32).toString('hex')
const ZERO = `0x${'0'.repeat(64)}` as Hex

interface Figures {
  perSecond: number
  p50: number
  p99: number
  max: number
  errors: number
}

const hash = (): Hex => `0x${randomBytes(32).toString('hex')}`
const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

/** `total` jobs over `CLIENTS` concurrent workers; latency of each job, throughput of the whole. */
async function drive(total: number, job: (i: number) => Promise<boolean>): Promise<Figures> {
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
  }
}

/** The floor: viem signs and sends the same `anchor` call with manual nonces and waits for each receipt. */
async function bareLoop(chain: TestChain, total: number): Promise<Figures> {
  let nonce = await firstBareNonce(chain)
  return drive(total, async () => (await sendBareAnchor(chain, nonce++)).status === 'success')
}

function firstBareNonce(chain: TestChain): Promise<number> {
  return chain.publicClient.getTransactionCount({ address: chain.account(1).address, blockTag: 'pending' })
}

/** One `anchor` call signed by account 1 with an explicit nonce and fixed fees, waited for like the relay waits. */
async function sendBareAnchor(chain: TestChain, nonce: number) {
  const txHash = await chain.walletClient(1).writeContract({
    address: chain.contract,
    abi: documentAnchorsAbi,
    functionName: 'anchor',
    args: [hash(), ZERO],
    nonce,
    gas: 40_000n,
    maxFeePerGas: parseGwei('5'),
    maxPriorityFeePerGas: parseGwei('1'),
  })
  return chain.publicClient.waitForTransactionReceipt({ hash: txHash, pollingInterval: 20 })
}

async function bareLoopSequential(chain: TestChain, total: number): Promise<Figures> {
  let nonce = await firstBareNonce(chain)
  const latencies: number[] = []
  for (let i = 0; i < total; i++) {
    const t0 = performance.now()
    await sendBareAnchor(chain, nonce++)
    latencies.push(performance.now() - t0)
  }
  latencies.sort((a, b) => a - b)
  return {
    perSecond: total / (latencies.reduce((a, b) => a + b, 0) / 1000),
    p50: percentile(latencies, 0.5),
    p99: percentile(latencies, 0.99),
    max: latencies[latencies.length - 1]!,
    errors: 0,
  }
}

interface Service {
  app: AppInstance
  url: string
  database: DatabaseHandle
  tokens: string[]
  close(): Promise<void>
}

/** PostgreSQL: a throwaway database beside the one DATABASE_URL names, dropped afterwards. */
async function throwawayDatabase(): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const adminUrl = loadConfig(process.env).database.url
  if (adminUrl === undefined) return { url: undefined, drop: async () => {} }
  return createThrowawayDatabase(adminUrl, 'anchor_bench')
}

async function startRelayService(chain: TestChain): Promise<Service> {
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
    chain: testChainContext(chain),
    logger: pino({ level: 'silent' }) as FastifyBaseLogger,
  })
  const url = await app.listen({ host: '127.0.0.1', port: 0 })
  const tokens: string[] = []
  for (let i = 0; i < CLIENTS; i++) {
    const email = `bench-${i}-${randomBytes(4).toString('hex')}@example.com`
    const [row] = await database.db.insert(users).values({ email }).returning()
    tokens.push((await startSession(database.db, app.deps.jwt, { id: row!.id, email }, 'email')).token)
  }
  return {
    app,
    url,
    database,
    tokens,
    close: async () => {
      await app.close()
      await database.close()
      await throwaway.drop()
    },
  }
}

async function relayOnce(service: Service, token: string): Promise<number> {
  const response = await fetch(`${service.url}/api/relay`, {
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

async function relayLoad(service: Service, total: number): Promise<Figures> {
  return drive(total, async (i) => (await relayOnce(service, service.tokens[i % CLIENTS]!)) === 201)
}

/** Wall time during which at least one database call is in flight, for `fn`. */
async function databaseBusy(database: DatabaseHandle, fn: () => Promise<void>): Promise<{ ms: number; calls: number }> {
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
  try {
    await fn()
  } finally {
    for (const undo of restore) undo()
  }
  return { ms: busy, calls }
}

async function roundTripFloor(database: DatabaseHandle, count: number): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < count; i++) {
    if (database.kind === 'pglite') await database.pglite.query('SELECT 1')
    else await database.pool.query('SELECT 1')
  }
  return (performance.now() - started) / count
}

function line(label: string, figures: Figures, floor?: Figures): void {
  const ratio = floor ? `  ratio ${(figures.perSecond / floor.perSecond).toFixed(2)}` : ''
  console.log(
    `${label.padEnd(34)} ${figures.perSecond.toFixed(0).padStart(5)} tx/s  p50 ${figures.p50.toFixed(1).padStart(7)} ms  ` +
      `p99 ${figures.p99.toFixed(1).padStart(7)} ms  max ${figures.max.toFixed(0).padStart(5)} ms  errors ${figures.errors}${ratio}`,
  )
}

async function scenario(label: string, blockTime: number | undefined, total: number): Promise<void> {
  const chain = await startTestChain({
    relayers: [(await import('../src/chain/anvil-accounts.ts')).anvilAccount(1).address as Address],
    anvil: blockTime === undefined ? {} : { blockTime },
  })
  const service = await startRelayService(chain)
  try {
    // Warm both paths (JIT, fee cache, nonce row, connections) before measuring.
    await bareLoop(chain, CLIENTS)
    await relayLoad(service, CLIENTS)
    const floor = await bareLoop(chain, total)
    const relay = await relayLoad(service, total)
    console.log(`\n${label} (${total} transactions, ${CLIENTS} concurrent clients, ${service.database.kind})`)
    line('bare viem loop (floor)', floor)
    line('POST /api/relay → 201', relay, floor)
    if (blockTime === undefined) {
      // One client at a time: latency without queueing (at 50 in flight it is mostly waiting for anvil's turn).
      const single = await bareLoopSequential(chain, SEQUENTIAL_RELAYS)
      const token = service.tokens[0]!
      const latencies: number[] = []
      const busy = await databaseBusy(service.database, async () => {
        for (let i = 0; i < SEQUENTIAL_RELAYS; i++) {
          const t0 = performance.now()
          await relayOnce(service, token)
          latencies.push(performance.now() - t0)
        }
      })
      latencies.sort((a, b) => a - b)
      const sequential: Figures = {
        perSecond: SEQUENTIAL_RELAYS / (latencies.reduce((a, b) => a + b, 0) / 1000),
        p50: percentile(latencies, 0.5),
        p99: percentile(latencies, 0.99),
        max: latencies[latencies.length - 1]!,
        errors: 0,
      }
      line('bare viem loop, 1 client', single)
      line('POST /api/relay, 1 client', sequential, single)
      const perRelay = busy.ms / SEQUENTIAL_RELAYS
      const calls = busy.calls / SEQUENTIAL_RELAYS
      const floorMs = (await roundTripFloor(service.database, 500)) * calls
      console.log(
        `database time per relay (sequential) ${perRelay.toFixed(2)} ms in ${calls.toFixed(1)} calls; ` +
          `floor ${floorMs.toFixed(2)} ms (as many SELECT 1); ratio ${(floorMs / perRelay).toFixed(2)}`,
      )
    }
  } finally {
    await service.close()
    await chain.stop()
  }
}

const deadline = setTimeout(() => {
  console.error('bench/relay.ts: time limit reached')
  process.exit(1)
}, 240_000)
await scenario('automine', undefined, AUTOMINE_TXS)
await scenario('--block-time 1', 1, BLOCK_TIME_TXS)
clearTimeout(deadline)
