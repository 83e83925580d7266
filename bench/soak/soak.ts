// `npm run soak [-- --minutes N] [-- --write-docs]`: a fleet of three instances behind HAProxy, with PostgreSQL,
// Redis and a one-second-block anvil of its own, under a fixed-rate mixed workload and a schedule of faults; then
// checks the invariants from the chain and the database, prints the report, and exits non-zero if any fails.
// Everything runs on loopback and is torn down at the end, on failure and on Ctrl-C. See docs/operations.md.
import { execFileSync } from 'node:child_process'
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { type FaultResult, faultSchedule, runFaults } from './faults.ts'
import { checkInvariants, type Invariant } from './invariants.ts'
import { HEAP_SLOPE_BOUND_MB_PER_HOUR, MemorySampler, type MemorySlope, memorySlopes, WARM_UP_MS } from './memory.ts'
import { Recorder } from './recorder.ts'
import { renderReport, writeReportInto } from './report.ts'
import { DEFAULT_RATES, Workload } from './workload.ts'
import { startWorld, type World } from './world.ts'

const OPERATIONS_DOC = fileURLToPath(new URL('../../docs/operations.md', import.meta.url))
const SETUP_USERS = 24
const { values } = parseArgs({
  options: {
    minutes: { type: 'string', default: '3' },
    replication: { type: 'string', default: 'sync' },
    restore: { type: 'boolean', default: false },
    'write-docs': { type: 'boolean', default: false },
    'heap-snapshots': { type: 'boolean', default: false },
  },
})
const minutes = Number(values.minutes)
if (!(minutes > 0)) throw new Error('--minutes must be a positive number')
const replication = values.replication
if (replication !== 'sync' && replication !== 'async') throw new Error('--replication must be sync or async')
// What asynchronous replication or a restore loses of the library and of sign-outs is lost for good: only the anchors
// come back, from the chain. Those two invariants then report their differences without failing the run.
const databaseMayForget = replication === 'async' || values.restore
const seconds = Math.round(minutes * 60)
/** Only a long run measures memory growth: its slope is told apart from start-up and noise. */
const longRun = seconds >= 30 * 60
const started = Date.now()
const logDir = await mkdtemp(join(tmpdir(), 'anchor-soak-logs-'))
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${line}`)

let world: World | undefined
// However the world misbehaves, the run ends: the setup, the workload, the drain and the checks each have a bound.
const hardLimit = setTimeout(
  () => {
    log('time limit reached: tearing down')
    void tearDown().finally(() => process.exit(1))
  },
  (seconds + 420) * 1000,
)
hardLimit.unref()
let stopping = false
const tearDown = async () => {
  if (stopping) return
  stopping = true
  await world?.stop()
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: tearing down`)
    void tearDown().finally(() => process.exit(130))
  })
}

try {
  // A long run's caches are capped low so that they are full after the warm-up.
  world = await startWorld(log, logDir, replication, {
    smallCaches: longRun,
    heapSnapshots: values['heap-snapshots'],
  })
  const recorder = new Recorder(world.lbUrl)
  const currentWorld = world
  const workload = new Workload(recorder, world.inbox, () => currentWorld.instances.map((instance) => instance.url))
  await workload.setUp(SETUP_USERS, world.webhooks.baseUrl)
  log(`${SETUP_USERS} users signed in, each with a webhook; workload for ${seconds} s`)
  const workloadStart = Date.now()
  workload.start(DEFAULT_RATES)
  const memory = new MemorySampler(world, world.metricsToken)
  memory.start()
  const faults: Promise<FaultResult[]> = runFaults(
    world,
    recorder,
    () => workload.probe(),
    faultSchedule(seconds, { restore: values.restore }),
    workloadStart,
    log,
  )
  const snapshots = values['heap-snapshots'] ? heapSnapshotsAt([WARM_UP_MS, seconds * 1000 - 5_000], world) : []
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  for (const snapshot of snapshots) clearTimeout(snapshot)
  await workload.stopArrivals()
  const faultResults = await faults
  log('workload stopped; draining open relays and syncs')
  const left = await workload.drain(60_000)
  log(`drained (${left.openRelays} relays, ${left.openSyncs} syncs still open); waiting for the relayers to settle`)
  await settle(world)
  await webhooksDelivered(world)
  const slopes = memorySlopes(memory.stop())
  log(`reconciliation: ${await reconciledLines(logDir)}`)
  const invariants = await checkInvariants(world, workload, recorder, faultResults, databaseMayForget)
  if (longRun) invariants.push(heapBound(slopes))
  const report = renderReport({
    command: `npm run soak -- --minutes ${values.minutes} --replication ${replication}${values.restore ? ' --restore' : ''}`,
    seconds,
    startedAt: workloadStart,
    samples: recorder.samples,
    faults: faultResults,
    invariants,
    memory: slopes,
    machine: `2 shared cores, ${execFileSync('uptime', { encoding: 'utf8' })
      .trim()
      .replace(/^.*load/, 'load')}`,
  })
  console.log(`\n${report}\n`)
  if (values['write-docs']) await writeReportInto(OPERATIONS_DOC, report)
  process.exitCode = invariants.every((invariant) => invariant.ok) ? 0 : 1
} catch (error) {
  console.error('soak failed:', error)
  process.exitCode = 1
} finally {
  await tearDown()
  // The processes' logs are kept only when something failed (they are what explains it), or with heap snapshots.
  if (process.exitCode === 0 && !values['heap-snapshots']) await rm(logDir, { recursive: true, force: true })
  else console.log(`logs of the instances and HAProxy${values['heap-snapshots'] ? ', heap snapshots' : ''}: ${logDir}`)
}

/** What the instances' reconciliations found, as their logs say (a restarted instance continues its file). */
async function reconciledLines(dir: string): Promise<string> {
  let recovered = 0
  let adopted = 0
  for (const file of (await readdir(dir)).filter((name) => name.startsWith('anchor'))) {
    const text = await readFile(join(dir, file), 'utf8')
    recovered += text.split('ALERT anchor recovered from the chain').length - 1
    adopted += text.split('ALERT anchor re-attached to its mined transaction').length - 1
  }
  return `${recovered} anchors recovered from the chain, ${adopted} re-attached to their mined transaction`
}

/**
 * SIGUSR2 to every instance at each of `times` (ms into the workload): two snapshots of one process, compared in
 * Chrome DevTools' Comparison view, show what the heap gained between them (each snapshot collects garbage first).
 */
function heapSnapshotsAt(times: number[], world: World): NodeJS.Timeout[] {
  return times
    .filter((at) => at > 0)
    .map((at) =>
      setTimeout(() => {
        for (const pid of world.pids()) process.kill(pid, 'SIGUSR2')
      }, at),
    )
}

function heapBound(slopes: MemorySlope[]): Invariant {
  const measured = slopes.filter((slope) => slope.heapMbPerHour !== undefined)
  const over = measured.filter((slope) => slope.heapMbPerHour! > HEAP_SLOPE_BOUND_MB_PER_HOUR)
  return {
    name: `every instance's heap grows under ${HEAP_SLOPE_BOUND_MB_PER_HOUR} MB/h after its first 5 minutes`,
    ok: measured.length > 0 && over.length === 0,
    detail: measured
      .map((slope) => `${slope.instance} (pid ${slope.pid}): ${slope.heapMbPerHour!.toFixed(1)} MB/h`)
      .join('; '),
  }
}

/** Until no webhook delivery is left to make (the schedule's retries take 31 s at most), at most 60 s. */
function webhooksDelivered(world: World): Promise<void> {
  return pollDatabase(world, async (db) => (await count(db, "webhook_deliveries WHERE status = 'pending'")) === 0)
}

/** Until no anchor is pending and no relayer transaction waits in the pool (the monitors finish them), at most 60 s. */
function settle(world: World): Promise<void> {
  return pollDatabase(world, async (db) => {
    const counts = await Promise.all(
      world.relayers.flatMap((address) => [
        world.chain.getTransactionCount({ address, blockTag: 'latest' }),
        world.chain.getTransactionCount({ address, blockTag: 'pending' }),
      ]),
    )
    const poolEmpty = counts.every((n, i) => i % 2 === 1 || n === counts[i + 1])
    return (await count(db, "anchors WHERE status = 'pending'")) === 0 && poolEmpty
  })
}

/** Asks `done` every second, with a connection to the service's database, until it says so or 60 s have passed. */
async function pollDatabase(world: World, done: (db: pg.Client) => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 60_000
  const db = new pg.Client({ connectionString: world.databaseUrl })
  await db.connect()
  try {
    while (Date.now() < deadline && !(await done(db))) await new Promise((resolve) => setTimeout(resolve, 1_000))
  } finally {
    await db.end()
  }
}

async function count(db: pg.Client, fromWhere: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${fromWhere}`)
  return rows[0]!.n
}
