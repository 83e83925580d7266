// The fault schedule: what each fault does, how long it lasts, and the time until the fleet fully serves again.
// Full recovery: every instance answers /readyz and the workload's probe passes through the balancer (a fresh relay
// confirmed, its verify answered, a library sync accepted).
import { setTimeout as sleep } from 'node:timers/promises'
import { parseGwei } from 'viem'
import type { Recorder } from './recorder.ts'
import type { World } from './world.ts'

const RECOVERY_LIMIT_MS = 90_000

export interface Fault {
  name: string
  /** Seconds into the workload at which it starts. */
  at: number
  /** How long the fault condition lasts, seconds (0: a single blow, such as a kill). */
  lasts: number
  /** May answer a note (a string) on what it did, for the log. */
  inject(world: World): Promise<unknown>
  heal(world: World): Promise<void>
  /** When the commits it may lose began to be written (the standby stopped receiving, the backup was taken). */
  losesSince?(): number | undefined
}

export interface FaultResult {
  name: string
  startedAt: number
  healedAt: number
  /** Undefined: not recovered within the limit. */
  recoveredAt: number | undefined
  /** The span of commits it may have lost (asynchronous replication, a restore), ms since the epoch. */
  lost?: { from: number; to: number }
}

/** How far the standby falls behind before the primary is killed: what asynchronous replication loses. */
const STANDBY_LAG_MS = 3_000

/**
 * The faults spread over `seconds` of workload (nine; eleven with `restore`: a base backup early, restored near the
 * end); `baseFeeSeconds` is how long the fee spike lasts.
 */
export function faultSchedule(seconds: number, options: { restore: boolean }): Fault[] {
  const compressed = seconds < 120
  const baseFeeSeconds = compressed ? 15 : 60
  const stallSeconds = 15
  let spike: NodeJS.Timeout | undefined
  let failoverAt: number | undefined
  let stalledPid: number | undefined
  // A short run puts the reorg and the fee spike inside the stall: they wait for the node to run again, as an operator
  // would, rather than queue behind a stopped process (a reorg timed out and sent again ran twice, the second failing).
  let anvilRunning: Promise<void> = Promise.resolve()
  let resumeAnvil = () => {}
  const faults: Omit<Fault, 'at'>[] = [
    {
      name: 'SIGKILL one instance, restart it',
      lasts: 0,
      inject: (world) => world.killInstance(1),
      heal: (world) => world.restartInstance(1),
    },
    {
      name: 'restart PostgreSQL (fast shutdown)',
      lasts: 0,
      inject: (world) => world.postgres.restartFast(),
      heal: async () => {},
    },
    {
      name: 'restart Redis',
      lasts: 0,
      inject: (world) => world.redis.restart(),
      heal: async () => {},
    },
    {
      name: `stall anvil ${stallSeconds} s (SIGSTOP, SIGCONT)`,
      lasts: stallSeconds,
      inject: async (world) => {
        anvilRunning = new Promise((resolve) => {
          resumeAnvil = resolve
        })
        stalledPid = world.anvil.pid
        process.kill(stalledPid, 'SIGSTOP')
      },
      heal: async () => {
        if (stalledPid !== undefined) process.kill(stalledPid, 'SIGCONT')
        resumeAnvil()
      },
    },
    {
      name: '3-block reorg (anvil_reorg)',
      lasts: 0,
      inject: async (world) => {
        await anvilRunning
        // Not idempotent: sent once.
        await world.chain.request({ method: 'anvil_reorg' as never, params: [3, []] as never }, { retryCount: 0 })
      },
      heal: async () => {},
    },
    {
      name: `base fee ×20 for ${baseFeeSeconds} s`,
      lasts: baseFeeSeconds,
      inject: async (world) => {
        await anvilRunning
        // The next block's base fee only: set again every block while the spike lasts.
        const block = await world.chain.getBlock()
        const spiked = (block.baseFeePerGas ?? parseGwei('1')) * 20n
        const set = () =>
          world.chain
            .request({
              method: 'anvil_setNextBlockBaseFeePerGas' as never,
              params: [`0x${spiked.toString(16)}`] as never,
            })
            .catch(() => {})
        await set()
        spike = setInterval(set, 500)
      },
      heal: async () => clearInterval(spike),
    },
    {
      name: 'first RPC endpoint drops every 10th send answer, refusing connections 1 s, for 20 s',
      lasts: 20,
      inject: async (world) => {
        // As a provider's load balancer losing a backend: the send reached the node, its answer is lost, and the next
        // connections are refused (the service then sends through the second endpoint).
        let sends = 0
        world.throttle.intercept = (calls) => {
          if (!calls.some((call) => call.method === 'eth_sendRawTransaction')) return undefined
          sends += 1
          return sends % 10 === 0 ? { refuseConnectionsMs: 1_000 } : undefined
        }
      },
      heal: async (world) => {
        world.throttle.intercept = undefined
      },
    },
    {
      name: 'first RPC endpoint answers 429 for 10 s',
      lasts: 10,
      inject: async (world) => {
        world.throttle.throttled = true
      },
      heal: async (world) => {
        world.throttle.throttled = false
      },
    },
    {
      name: `PostgreSQL failover: standby ${STANDBY_LAG_MS / 1000} s behind, SIGKILL the primary, promote the standby; rebuild the old primary as the standby`,
      lasts: 0,
      losesSince: () => failoverAt,
      inject: async (world) => {
        failoverAt = Date.now()
        const { standbyBehindBytes } = await world.postgres.failOver(STANDBY_LAG_MS)
        return `the standby had not flushed ${standbyBehindBytes ?? '?'} bytes of the primary's WAL`
      },
      heal: (world) => world.postgres.rebuildStandby(),
    },
  ]
  if (options.restore) {
    let backup: Promise<string> | undefined
    let backupAt: number | undefined
    faults.splice(2, 0, {
      name: 'base backup of the primary (pg_basebackup)',
      lasts: 0,
      inject: async (world) => {
        backupAt = Date.now()
        backup = world.postgres.takeBaseBackup()
        await backup
      },
      heal: async () => {},
    })
    faults.push({
      name: 'restore the base backup: fleet stopped, PostgreSQL restored and a standby cloned, fleet started',
      lasts: 0,
      losesSince: () => backupAt,
      inject: async (world) => {
        if (!backup) throw new Error('no base backup to restore')
        await Promise.all([...world.instances.keys()].map((index) => world.stopInstance(index)))
        await world.postgres.restore(await backup)
      },
      heal: async (world) => {
        for (const index of world.instances.keys()) await world.restartInstance(index)
      },
    })
  }
  // Spread evenly after a warm-up; in a short run the faults come closer together, the fee spike overlapping others.
  const warmUp = compressed ? 5 : 15
  const slot = (seconds - warmUp - 10) / faults.length
  return faults.map((fault, i) => ({ ...fault, at: warmUp + i * slot }))
}

/** Runs the schedule against the clock of `startedAt`; resolves with each fault's times. */
export async function runFaults(
  world: World,
  recorder: Recorder,
  probe: () => Promise<boolean>,
  faults: Fault[],
  startedAt: number,
  log: (line: string) => void,
): Promise<FaultResult[]> {
  return Promise.all(
    faults.map(async (fault) => {
      await sleep(Math.max(0, startedAt + fault.at * 1000 - Date.now()))
      const faultStart = Date.now()
      log(`fault: ${fault.name}`)
      const note = await fault.inject(world)
      if (typeof note === 'string') log(`fault: ${fault.name}: ${note}`)
      await sleep(fault.lasts * 1000)
      await fault.heal(world)
      const healedAt = Date.now()
      const recoveredAt = await waitForRecovery(world, recorder, probe, RECOVERY_LIMIT_MS)
      const seconds = (t: number | undefined) =>
        t === undefined ? 'never' : `${((t - faultStart) / 1000).toFixed(1)} s`
      log(`fault: ${fault.name}: healed after ${seconds(healedAt)}, fully recovered after ${seconds(recoveredAt)}`)
      const losesSince = fault.losesSince?.()
      const lost = losesSince === undefined ? undefined : { from: losesSince, to: healedAt }
      return { name: fault.name, startedAt: faultStart, healedAt, recoveredAt, ...(lost && { lost }) }
    }),
  )
}

async function waitForRecovery(
  world: World,
  recorder: Recorder,
  probe: () => Promise<boolean>,
  limitMs: number,
): Promise<number | undefined> {
  const deadline = Date.now() + limitMs
  while (Date.now() < deadline) {
    if ((await allReady(world, recorder)) && (await probe())) return Date.now()
    await sleep(250)
  }
  return undefined
}

async function allReady(world: World, recorder: Recorder): Promise<boolean> {
  const answers = await Promise.all(
    world.instances.map((instance) => recorder.send('probe', 'GET', '/readyz', { base: instance.url, record: false })),
  )
  return answers.every((answer) => answer.status === 200)
}
