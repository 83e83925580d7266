// GET /api/verify/:txHash under load, each figure next to its limit measured in the same run:
// - cached, in the service: autocannon (100 connections) against the verify route and against a bare route of the
//   same app sending the same bytes with the same headers through the same hooks (the app's global ones, the public
//   answer's headers and a per-IP limiter): the framework's own floor. A plain Fastify instance sending the same bytes
//   is measured too, for comparison with the figures of issue 18. With the in-process LRU, then with Redis.
// - cached, at the edge: the shipped deploy/haproxy.cfg in front of the app, its cache answering, against HAProxy
//   with the same settings answering the same bytes itself (`http-request return`): the deployment's floor. Also the
//   CPU time either HAProxy spends per request, which still compares them should the load generator be the limit.
// - uncached (result cache off, no receipt final; on PGlite the database's index of the chain is remembered until
//   anchors change, src/verify/indexed-chain-cache.ts): sequential latency for chains of depth 1, 10 and 50, against one
//   raw JSON-RPC batch fetching the same receipts straight from anvil; and RPC round trips per request.
// The server runs in a child process so that the load generator does not share its event loop.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import Fastify from 'fastify'
import { Redis } from 'ioredis'
import type { AppInstance } from '../src/api/app-types.ts'
import { publicAnswerHeaders } from '../src/api/cors.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { startTestChain } from '../test/helpers/chain/anvil.ts'
import { startRpcProxy } from '../test/helpers/chain/rpc-proxy.ts'
import { anchorChain, indexAnchors } from '../test/verify/helpers/anchors.ts'
import { cpuMicroseconds, type Edge, startEdge } from './haproxy-edge.ts'
import { atLeast, atMost, forComparison, median, printRatioTable, type RatioRow } from './ratio-table.ts'
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
const BARE = 'bare route, same hooks'
const EDGE_FLOOR = 'HAProxy answering by itself'

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
  edge: { cacheUrl: string; floorUrl: string; cachePid: number; floorPid: number }
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
    await edge?.stop()
    edge = undefined
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
  /** The verify route's hooks on a route sending the verify answer's bytes, captured once: the framework's floor. */
  const withBareRoute = (app: AppInstance) => {
    let bare: VerifyAnswer | undefined
    const limit = app.limiter({
      name: 'bench:ip',
      max: 1_000_000_000,
      timeWindowMs: 60_000,
      what: 'requests',
      syncIntervalMs: 100,
    })
    app.get('/bench/bare', { onRequest: [publicAnswerHeaders, limit.onRequest] }, async (_request, reply) => {
      bare ??= await captureVerifyAnswer(app, tips[CACHED_DEPTH]!)
      return reply.headers(bare.headers).send(bare.body)
    })
  }
  let edge: Edge | undefined
  const edgeDir = await mkdtemp(join(tmpdir(), 'bench-edge-'))
  const phases: { [P in Phase]: () => Promise<PhaseUrls[P]> } = {
    lru: async () => {
      const cachedUrl = await start({}, testChain.rpcUrl, withBareRoute)
      sample = await captureVerifyAnswer(apps[0]!, tips[CACHED_DEPTH]!)
      return { cachedUrl }
    },
    redis: async () => ({
      redisUrl: redisUp
        ? await start({ REDIS_URL, VERIFY_REDIS_KEY_PREFIX: redisPrefix }, testChain.rpcUrl, withBareRoute)
        : undefined,
    }),
    edge: async () => {
      const appUrl = await start({})
      const answer = await captureVerifyAnswer(apps[0]!, tips[CACHED_DEPTH]!)
      edge = await startEdge(new URL(appUrl).host, answer, new Date().toUTCString(), edgeDir)
      const { cacheUrl, floorUrl, cachePid, floorPid } = edge
      return { cacheUrl, floorUrl, cachePid, floorPid }
    },
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
      await rm(edgeDir, { recursive: true, force: true })
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
    const plain: Target = { name: PLAIN, url: `${ready.plainUrl}/bench/bare` }
    const rows: RatioRow[] = []

    const { cachedUrl } = await phase('lru')
    const lru = await underLoad([
      { name: BARE, url: `${cachedUrl}/bench/bare` },
      { name: 'verify, cached (LRU)', url: `${cachedUrl}${verifyPath}` },
      plain,
    ])
    rows.push(
      rpsRow(lru, 'verify, cached (LRU)', BARE, atLeast),
      rpsRow(lru, 'verify, cached (LRU)', PLAIN, forComparison),
    )

    const { redisUrl } = await phase('redis')
    if (redisUrl) {
      const redis = await underLoad([
        { name: BARE, url: `${redisUrl}/bench/bare` },
        { name: 'verify, cached (Redis)', url: `${redisUrl}${verifyPath}` },
      ])
      rows.push(rpsRow(redis, 'verify, cached (Redis)', BARE, atLeast))
    }

    const { cacheUrl, floorUrl, cachePid, floorPid } = await phase('edge')
    await expectEdgeHit(`${cacheUrl}${verifyPath}`)
    const edge = await underLoad([
      { name: EDGE_FLOOR, url: floorUrl, pid: floorPid },
      { name: 'verify through HAProxy’s cache', url: `${cacheUrl}${verifyPath}`, pid: cachePid },
      // What the cache saves: the same HAProxy passing every request on to the app, as it does any miss.
      {
        name: 'verify through HAProxy, to the app',
        url: `${cacheUrl}${verifyPath}`,
        pid: cachePid,
        headers: { 'cache-control': 'no-cache' },
      },
    ])
    rows.push(
      rpsRow(edge, 'verify through HAProxy’s cache', EDGE_FLOOR, atLeast),
      rpsRow(edge, 'verify through HAProxy, to the app', EDGE_FLOOR, forComparison),
    )
    const [cacheCpu, floorCpu] = [edge.get('verify through HAProxy’s cache')!, edge.get(EDGE_FLOOR)!]
    rows.push({
      path: 'HAProxy CPU per request, its own answer / its cache',
      measured: `${median(cacheCpu.cpuPerRequest).toFixed(1)} µs`,
      floor: `${median(floorCpu.cpuPerRequest).toFixed(1)} µs`,
      ...forComparison(ratioOfRounds(floorCpu.cpuPerRequest, cacheCpu.cpuPerRequest)),
    })

    rows.push(...(await uncachedFigures(ready, await phase('uncached'), child)))
    printRatioTable(
      'verify: cached against a bare route with the same hooks (and plain Fastify), through HAProxy’s cache against HAProxy answering by itself; uncached p50 against one raw batch',
      rows,
    )
  } finally {
    child.send({ type: 'stop' })
    await new Promise((resolve) => child.once('exit', resolve))
  }
}

interface Target {
  name: string
  url: string
  /** A process whose CPU time per request is measured too. */
  pid?: number
  headers?: Record<string, string>
}

/** Per target, one figure per round. */
type Rounds = Map<string, { rps: number[]; p99: number[]; cpuPerRequest: number[] }>

/** The targets under load in alternating rounds; the first target's figures are the floor of the printed ratios. */
async function underLoad(targets: Target[]): Promise<Rounds> {
  const bytes = (await (await fetch(targets[0]!.url)).arrayBuffer()).byteLength
  console.log(
    `under load: ${CONNECTIONS} connections, body ${bytes} bytes (depth-${CACHED_DEPTH} chain), ${ROUNDS} rounds of ${ROUND_SECONDS} s`,
  )
  for (const { url, headers } of targets) await load(url, WARMUP_SECONDS, headers)
  const rounds: Rounds = new Map(targets.map(({ name }) => [name, { rps: [], p99: [], cpuPerRequest: [] }]))
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating the order cancels what running first or last in a round does to a target.
    for (const { name, url, pid, headers } of round % 2 === 0 ? targets : [...targets].reverse()) {
      const cpuBefore = pid === undefined ? 0 : cpuMicroseconds(pid)
      const result = await load(url, ROUND_SECONDS, headers)
      const entry = rounds.get(name)!
      entry.rps.push(result.requests.average)
      entry.p99.push(result.latency.p99)
      if (pid !== undefined) entry.cpuPerRequest.push((cpuMicroseconds(pid) - cpuBefore) / result.requests.total)
    }
  }
  const floor = rounds.get(targets[0]!.name)!
  for (const [name, { rps, p99, cpuPerRequest }] of rounds) {
    const cpu = cpuPerRequest.length > 0 ? `  CPU ${median(cpuPerRequest).toFixed(1)} µs/request` : ''
    console.log(
      `  ${name.padEnd(32)} ${median(rps).toFixed(0).padStart(6)} req/s  p99 ${median(p99).toFixed(1).padStart(5)} ms${cpu}` +
        `  ratio ${ratioOfRounds(rps, floor.rps).toFixed(2)} of ${targets[0]!.name}` +
        `  (rounds: ${rps.map((value, round) => (value / floor.rps[round]!).toFixed(2)).join(' ')})`,
    )
  }
  return rounds
}

/**
 * Each ratio is taken round by round against the floor of the same round, and the median round reported: this
 * machine's speed drifts over a run (other virtual machines on the host), and a ratio of rounds seconds apart drifts
 * with it far less than a ratio of means over the whole run.
 */
function ratioOfRounds(values: number[], floor: number[]): number {
  return median(values.map((value, round) => value / floor[round]!))
}

function rpsRow(
  rounds: Rounds,
  name: string,
  floorName: string,
  aim: (ratio: number, aim: number) => Pick<RatioRow, 'ratio' | 'aim' | 'met'>,
): RatioRow {
  const { rps } = rounds.get(name)!
  const floor = rounds.get(floorName)!.rps
  return {
    path: `${name}, req/s (floor: ${floorName})`,
    measured: median(rps).toFixed(0),
    floor: median(floor).toFixed(0),
    ...aim(ratioOfRounds(rps, floor), 0.8),
  }
}

/** The edge row measures HAProxy's cache only if the answer is in it: its copy carries an Age header. */
async function expectEdgeHit(url: string): Promise<void> {
  for (let attempt = 0; attempt < 2; attempt++) await (await fetch(url)).arrayBuffer()
  const response = await fetch(url)
  await response.arrayBuffer()
  if (!response.headers.has('age')) throw new Error(`${url}: HAProxy did not answer from its cache`)
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
