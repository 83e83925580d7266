// GET /api/verify/:txHash under load, each figure next to its limit measured in the same run:
// - cached: autocannon (100 connections) against the verify route (a cached answer is given before Fastify routes the
//   request, src/api/early-answers.ts) and against a bare route of the same app returning the same bytes with the same
//   headers through Fastify (same hooks: CORS, metrics, nosniff); also a plain Fastify instance sending the same bytes
//   and headers (the floor of issue 18).
// - uncached (result cache off, no receipt final; on PGlite the database's index of the chain is remembered until
//   anchors change, src/verify/indexed-chain-cache.ts): sequential latency for chains of depth 1, 10 and 50, against one
//   raw JSON-RPC batch fetching the same receipts straight from anvil; and RPC round trips per request.
// The server runs in a child process so that the load generator does not share its event loop.
import { type ChildProcess, spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import type { AppInstance } from '../src/api/app-types.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { startTestChain } from '../test/helpers/anvil.ts'
import { startRpcProxy } from '../test/helpers/rpc-proxy.ts'
import { anchorChain, indexAnchors } from '../test/verify/helpers/anchors.ts'
import { atLeast, atMost, median, printRatioTable, type RatioRow } from './ratio-table.ts'
import { captureVerifyAnswer, type VerifyAnswer } from './verify-answer.ts'
import { benchApp, CONNECTIONS, load, nextMessage } from './verify-bench.ts'

const DEPTHS = [1, 10, 50] as const
// The cached body: a depth-10 chain, about 3.5 KB.
const CACHED_DEPTH = 10
const WARMUP_SECONDS = 2
const ROUND_SECONDS = 2
const ROUNDS = 8
const UNCACHED_SAMPLES = 300
const ROUND_TRIP_SAMPLES = 20
const REDIS_URL = 'redis://127.0.0.1:6379'
const PLAIN = 'plain Fastify, same bytes'

interface ServerReady {
  rpcUrl: string
  plainUrl: string
  tips: Record<number, string>
  chainHashes: Record<number, string[]>
}

/**
 * The apps each phase measures. One phase's apps run alone beside the plain floor, as one app per process runs in
 * production: another app's background work (its relay monitor's passes, its metrics collectors) in the same process
 * would weigh on the figures of the app under load.
 */
interface PhaseUrls {
  lru: { cachedUrl: string }
  redis: { redisUrl: string | undefined }
  uncached: { uncachedUrl: string; countedUrl: string }
}
type Phase = keyof PhaseUrls

if (process.argv.includes('--serve')) await serve()
else await measure()

async function serve(): Promise<void> {
  const testChain = await startTestChain()
  const database = await openDatabase({})
  await migrateDatabase(database)
  const tips: Record<number, string> = {}
  const chainHashes: Record<number, string[]> = {}
  for (const depth of DEPTHS) {
    const anchored = await anchorChain(testChain, depth)
    await indexAnchors(database.db, testChain, anchored)
    tips[depth] = anchored.at(-1)!.txHash
    chainHashes[depth] = anchored.map((anchor) => anchor.txHash)
  }
  const proxy = await startRpcProxy(testChain.rpcUrl)

  let apps: AppInstance[] = []
  async function start(env: Record<string, string>, rpcUrl = testChain.rpcUrl, setup?: (app: AppInstance) => void) {
    const app = await benchApp(database, testChain, env, rpcUrl)
    setup?.(app)
    apps.push(app)
    const url = await app.listen({ port: 0, host: '127.0.0.1' })
    // Each app serves the verification page from its build once it listens; the first request waits for that.
    await (await fetch(`${url}/v/${tips[CACHED_DEPTH]}`)).text()
    return url
  }
  async function closeApps() {
    for (const app of apps) await app.close()
    apps = []
  }

  const plain = Fastify()
  let sample: VerifyAnswer | undefined
  plain.get('/bench/bare', async (_request, reply) => reply.headers(sample!.headers).send(sample!.body))
  const plainUrl = await plain.listen({ port: 0, host: '127.0.0.1' })
  // The Redis-backed cache too, when the local Redis answers (keys removed on stop).
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null })
  const redisPrefix = `bench:verify:${process.pid}:`
  const redisUp = await redis.connect().then(
    () => true,
    () => false,
  )
  const uncachedEnv = { VERIFY_CACHE_TTL_SECONDS: '0', VERIFY_FINALITY_DEPTH: '1000000000' }
  const phases: { [P in Phase]: () => Promise<PhaseUrls[P]> } = {
    lru: async () => {
      const cachedUrl = await start({}, testChain.rpcUrl, (app) => {
        let bare: VerifyAnswer | undefined
        // Same bytes and headers as the verify answer, captured once; then nothing but sending them.
        app.get('/bench/bare', async (_request, reply) => {
          bare ??= await captureVerifyAnswer(app, tips[CACHED_DEPTH]!)
          return reply.headers(bare.headers).send(bare.body)
        })
      })
      sample = await captureVerifyAnswer(apps[0]!, tips[CACHED_DEPTH]!)
      return { cachedUrl }
    },
    redis: async () => ({
      redisUrl: redisUp ? await start({ REDIS_URL, VERIFY_REDIS_KEY_PREFIX: redisPrefix }) : undefined,
    }),
    uncached: async () => ({ uncachedUrl: await start(uncachedEnv), countedUrl: await start(uncachedEnv, proxy.url) }),
  }

  const ready: ServerReady = { rpcUrl: testChain.rpcUrl, plainUrl, tips, chainHashes }
  process.send!({ type: 'ready', ready })
  process.on('message', async (message: { type: string; phase?: Phase }) => {
    if (message.type === 'phase') {
      await closeApps()
      process.send!({ type: 'phase', urls: await phases[message.phase!]() })
    }
    if (message.type === 'round-trips') {
      process.send!({ type: 'round-trips', count: proxy.roundTrips().length })
      proxy.reset()
    }
    if (message.type === 'stop') {
      await closeApps()
      await plain.close()
      await proxy.close()
      if (redisUp) {
        const keys = await redis.keys(`${redisPrefix}*`)
        if (keys.length > 0) await redis.del(...keys)
        await redis.quit()
      }
      await database.close()
      await testChain.stop()
      process.exit(0)
    }
  })
}

async function measure(): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--conditions=@docanchor/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'],
    {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    },
  )
  try {
    const { ready } = await nextMessage<{ ready: ServerReady }>(child, 'ready')
    const phase = async <P extends Phase>(name: P) => {
      child.send({ type: 'phase', phase: name })
      return (await nextMessage<{ urls: PhaseUrls[P] }>(child, 'phase')).urls
    }
    const verifyPath = `/api/verify/${ready.tips[CACHED_DEPTH]}`
    const plainTarget: [string, string] = [PLAIN, `${ready.plainUrl}/bench/bare`]
    const { cachedUrl } = await phase('lru')
    const rows = await cachedFigures([
      ['bare route, same app', `${cachedUrl}/bench/bare`],
      ['verify, cached (LRU)', `${cachedUrl}${verifyPath}`],
      plainTarget,
    ])
    const { redisUrl } = await phase('redis')
    if (redisUrl)
      rows.push(...(await cachedFigures([['verify, cached (Redis)', `${redisUrl}${verifyPath}`], plainTarget])))
    rows.push(...(await uncachedFigures(ready, await phase('uncached'), child)))
    printRatioTable(
      'verify: cached against plain Fastify sending the same bytes; uncached p50 against one raw batch',
      rows,
    )
  } finally {
    child.send({ type: 'stop' })
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

/** The targets under load in alternating rounds, each against the plain floor measured in the same rounds. */
async function cachedFigures(targets: [string, string][]): Promise<RatioRow[]> {
  const bytes = (await (await fetch(targets[0]![1])).text()).length
  console.log(
    `cached: ${CONNECTIONS} connections, body ${bytes} bytes (depth-${CACHED_DEPTH} chain), ${ROUNDS} rounds of ${ROUND_SECONDS} s`,
  )

  for (const [, url] of targets) await load(url, WARMUP_SECONDS)
  const results = new Map<string, { rps: number[]; p99: number[] }>()
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating the order cancels what running first or last in a round does to a target.
    for (const [name, url] of round % 2 === 0 ? targets : [...targets].reverse()) {
      const result = await load(url, ROUND_SECONDS)
      const entry = results.get(name) ?? { rps: [], p99: [] }
      entry.rps.push(result.requests.average)
      entry.p99.push(result.latency.p99)
      results.set(name, entry)
    }
  }
  // Each ratio is taken round by round against the plain floor of the same round, and the median round reported:
  // this machine's speed drifts over a run (other virtual machines on the host), and a ratio of rounds seconds apart
  // drifts with it far less than a ratio of means over the whole run.
  const plain = results.get(PLAIN)!
  const ratioTo = (rps: number[], floor: number[]) => median(rps.map((value, round) => value / floor[round]!))
  const bare = results.get('bare route, same app')
  for (const [name, { rps, p99 }] of results) {
    const bareRatio = bare ? `ratio ${ratioTo(rps, bare.rps).toFixed(2)} of the bare route, ` : 'ratio '
    console.log(
      `  ${name.padEnd(26)} ${median(rps).toFixed(0).padStart(6)} req/s  p99 ${median(p99).toFixed(1).padStart(5)} ms` +
        `  ${bareRatio}${ratioTo(rps, plain.rps).toFixed(2)} of plain Fastify` +
        `  (rounds: ${rps.map((value, round) => (value / plain.rps[round]!).toFixed(2)).join(' ')})`,
    )
  }
  return [...results]
    .filter(([name]) => name.startsWith('verify'))
    .map(([name, { rps }]) => ({
      path: `${name}, req/s`,
      measured: median(rps).toFixed(0),
      floor: median(plain.rps).toFixed(0),
      ...atLeast(ratioTo(rps, plain.rps), 0.8),
    }))
}

async function uncachedFigures(
  ready: ServerReady,
  { uncachedUrl, countedUrl }: PhaseUrls['uncached'],
  child: ChildProcess,
): Promise<RatioRow[]> {
  const rows: RatioRow[] = []
  console.log(
    `uncached (result cache off, no receipt final, PGlite's index remembered): ${UNCACHED_SAMPLES} sequential requests per depth`,
  )
  for (const depth of DEPTHS) {
    const url = `${uncachedUrl}/api/verify/${ready.tips[depth]}`
    const floorBody = JSON.stringify(
      ready.chainHashes[depth]!.map((hash, id) => ({
        jsonrpc: '2.0',
        id,
        method: 'eth_getTransactionReceipt',
        params: [hash],
      })),
    )
    const floor = async () => {
      const response = await fetch(ready.rpcUrl, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: floorBody,
      })
      await response.text()
    }
    const verify = async () => {
      const response = await fetch(url)
      await response.text()
      if (response.status !== 200) throw new Error(`verify answered ${response.status}`)
    }
    for (let i = 0; i < 20; i++) {
      await floor()
      await verify()
    }
    const floorTimes: number[] = []
    const verifyTimes: number[] = []
    // Interleaved, so that a slowing anvil or a busy core affects both alike.
    for (let i = 0; i < UNCACHED_SAMPLES; i++) {
      floorTimes.push(await timed(floor))
      verifyTimes.push(await timed(verify))
    }
    const counted = `${countedUrl}/api/verify/${ready.tips[depth]}`
    await nextRoundTrips(child) // reset
    for (let i = 0; i < ROUND_TRIP_SAMPLES; i++) await (await fetch(counted)).text()
    const roundTrips = (await nextRoundTrips(child)) / ROUND_TRIP_SAMPLES
    const [p50, p99] = [percentile(verifyTimes, 50), percentile(verifyTimes, 99)]
    const [f50, f99] = [percentile(floorTimes, 50), percentile(floorTimes, 99)]
    console.log(
      `  depth ${String(depth).padStart(2)}: p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms;` +
        ` one raw batch of its ${depth} receipts: p50 ${f50.toFixed(2)} ms, p99 ${f99.toFixed(2)} ms;` +
        ` ratio (floor/verify) p50 ${(f50 / p50).toFixed(2)}, p99 ${(f99 / p99).toFixed(2)};` +
        ` RPC round trips per request ${roundTrips.toFixed(2)}`,
    )
    rows.push({
      path: `verify, uncached p50, depth ${depth}`,
      measured: `${p50.toFixed(2)} ms`,
      floor: `${f50.toFixed(2)} ms`,
      ...atMost(p50 / f50, 2),
    })
  }
  return rows
}

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!
}

async function nextRoundTrips(child: ChildProcess): Promise<number> {
  child.send({ type: 'round-trips' })
  return (await nextMessage<{ count: number }>(child, 'round-trips')).count
}
