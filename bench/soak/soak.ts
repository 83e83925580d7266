// `npm run soak [-- --minutes N] [-- --write-docs]`: a fleet of three instances behind HAProxy, with PostgreSQL,
// Redis and a one-second-block anvil of its own, under a fixed-rate mixed workload and a schedule of faults; then
// checks the invariants from the chain and the database, prints the report, and exits non-zero if any fails.
// Everything runs on loopback and is torn down at the end, on failure and on Ctrl-C. See docs/operations.md.
import { execFileSync } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'
import pg from 'pg'
import { type FaultResult, faultSchedule, runFaults } from './faults.ts'
import { checkInvariants } from './invariants.ts'
import { Recorder } from './recorder.ts'
import { renderReport, writeReportInto } from './report.ts'
import { DEFAULT_RATES, Workload } from './workload.ts'
import { startWorld, type World } from './world.ts'

const OPERATIONS_DOC = fileURLToPath(new URL('../../docs/operations.md', import.meta.url))
const SETUP_USERS = 24
const { values } = parseArgs({
  options: { minutes: { type: 'string', default: '3' }, 'write-docs': { type: 'boolean', default: false } },
})
const minutes = Number(values.minutes)
if (!(minutes > 0)) throw new Error('--minutes must be a positive number')
const seconds = Math.round(minutes * 60)
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
  world = await startWorld(log, logDir)
  const recorder = new Recorder(world.lbUrl)
  const currentWorld = world
  const workload = new Workload(recorder, world.inbox, () => currentWorld.instances.map((instance) => instance.url))
  await workload.setUp(SETUP_USERS)
  log(`${SETUP_USERS} users signed in; workload for ${seconds} s`)
  const workloadStart = Date.now()
  workload.start(DEFAULT_RATES)
  const faults: Promise<FaultResult[]> = runFaults(
    world,
    recorder,
    () => workload.probe(),
    faultSchedule(seconds),
    workloadStart,
    log,
  )
  await new Promise((resolve) => setTimeout(resolve, seconds * 1000))
  await workload.stopArrivals()
  const faultResults = await faults
  log('workload stopped; draining open relays and syncs')
  const left = await workload.drain(60_000)
  log(`drained (${left.openRelays} relays, ${left.openSyncs} syncs still open); waiting for the relayers to settle`)
  await settle(world)
  const invariants = await checkInvariants(world, workload, recorder, faultResults)
  const report = renderReport({
    command: `npm run soak -- --minutes ${values.minutes}`,
    seconds,
    startedAt: workloadStart,
    samples: recorder.samples,
    faults: faultResults,
    invariants,
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
  // The processes' logs are kept only when something failed: they are what explains it.
  if (process.exitCode === 0) await rm(logDir, { recursive: true, force: true })
  else console.log(`logs of the instances and HAProxy: ${logDir}`)
}

/** Until no anchor is pending and no relayer transaction waits in the pool (the monitors finish them), at most 60 s. */
async function settle(world: World): Promise<void> {
  const deadline = Date.now() + 60_000
  const db = new pg.Client({ connectionString: world.databaseUrl })
  await db.connect()
  try {
    while (Date.now() < deadline) {
      const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM anchors WHERE status = 'pending'")
      const counts = await Promise.all(
        world.relayers.flatMap((address) => [
          world.chain.getTransactionCount({ address, blockTag: 'latest' }),
          world.chain.getTransactionCount({ address, blockTag: 'pending' }),
        ]),
      )
      const poolEmpty = counts.every((count, i) => i % 2 === 1 || count === counts[i + 1])
      if (rows[0]!.n === 0 && poolEmpty) return
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
  } finally {
    await db.end()
  }
}
