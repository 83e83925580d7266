// Start-up time of the service on embedded defaults, fresh (new data dir: PGlite init, contract deploy) and warm
// (existing data dir), each against its floor measured in the same run: launching Node with the tsx loader and an empty
// program plus
// starting a bare anvil, the two things every start pays before any of our own work.
import { spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startAnvil } from '../src/chain/anvil.ts'
import { startServerProcess } from '../test/helpers/server-process.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const RUNS = 3

async function timed(work: () => Promise<void>): Promise<number> {
  const start = performance.now()
  await work()
  return performance.now() - start
}

async function bareFloor(): Promise<number> {
  const tsx = await timed(
    () =>
      new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', '-e', ''], { cwd: ROOT, stdio: 'ignore' })
        child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`tsx exited ${code}`))))
      }),
  )
  let stop: (() => Promise<void>) | undefined
  const anvil = await timed(async () => {
    stop = (await startAnvil()).stop
  })
  await stop?.()
  return tsx + anvil
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

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

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
console.log(`startup (median of ${RUNS}, spawn → /readyz 200)`)
console.log(`  floor (tsx launch + bare anvil): ${floor.toFixed(0)} ms`)
console.log(`  fresh data dir: ${median(fresh).toFixed(0)} ms = ${(median(fresh) / floor).toFixed(1)}× floor`)
console.log(`  warm data dir:  ${median(warm).toFixed(0)} ms = ${(median(warm) / floor).toFixed(1)}× floor`)
