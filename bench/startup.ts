// Start-up time of the service on embedded defaults, fresh (new data dir: PGlite init, contract deploy) and warm
// (existing data dir), each against its floor measured in the same run: a bare `node -e 0` plus starting a bare anvil
// until it answers, the two things every start pays before any of our own work.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startAnvil } from '../src/chain/anvil.ts'
import { startServerProcess } from '../test/helpers/processes/server-process.ts'
import { atMost, median, printRatioTable } from './ratio-table.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RUNS = 3

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

async function bareFloor(): Promise<number> {
  const node = await timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['-e', '0'], { cwd: ROOT, stdio: 'ignore' })
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`node exited ${code}`))))
      }),
  )
  let stop: (() => Promise<void>) | undefined
  const anvil = await timed(async () => {
    stop = (await startAnvil()).stop
  })
  await stop?.()
  return node + anvil
}

async function serviceStart(dataDir: string): Promise<number> {
  let server: Awaited<ReturnType<typeof startServerProcess>> | undefined
  const elapsed = await timed(async () => {
    server = await startServerProcess({ DATA_DIR: dataDir, LOG_LEVEL: 'info' })
    const ready = await fetch(`${server.url}/readyz`)
    if (ready.status !== 200) throw new Error(`readyz answered ${ready.status}`)
  })
  await server?.stop('SIGTERM')
  return elapsed
}

const floors: number[] = []
const fresh: number[] = []
const warm: number[] = []
for (let run = 0; run < RUNS; run++) {
  const dataDir = await mkdtemp(join(tmpdir(), 'anchor-bench-startup-'))
  floors.push(await bareFloor())
  fresh.push(await serviceStart(dataDir))
  warm.push(await serviceStart(dataDir))
  await rm(dataDir, { recursive: true, force: true })
}
const floor = median(floors)
const show = (ms: number) => `${ms.toFixed(0)} ms`
printRatioTable(`startup: median of ${RUNS}, spawn → /readyz 200; floor = bare \`node -e 0\` + bare anvil answering`, [
  {
    path: 'service start, fresh data directory',
    measured: show(median(fresh)),
    floor: show(floor),
    ...atMost(median(fresh) / floor, 20),
  },
  {
    path: 'service start, warm data directory',
    measured: show(median(warm)),
    floor: show(floor),
    ...atMost(median(warm) / floor, 10),
  },
])
