// One instance of the service as an operator runs it (`npm start`'s command, configured by environment
// only), on a port it keeps across restarts; ready once /readyz answers 200.
import { fileURLToPath } from 'node:url'
import { startWatched, type WatchedProcess, waitUntil } from './child-process.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

export interface ServiceInstance {
  name: string
  url: string
  process: WatchedProcess
}

export async function startServiceInstance(
  name: string,
  env: Record<string, string>,
  logFile: string,
): Promise<ServiceInstance> {
  const watched = startWatched(process.execPath, ['bin/server.js'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    logFile,
  })
  const url = `http://127.0.0.1:${env.PORT}`
  try {
    await waitUntil(
      `${name} to be ready`,
      async () => {
        if (watched.child.exitCode !== null) throw new Error(`${name} exited:\n${watched.tail()}`)
        return (await fetch(`${url}/readyz`)).status === 200
      },
      90_000,
    )
  } catch (error) {
    await watched.stop()
    throw new Error(`${name} did not start: ${(error as Error).message}\n${watched.tail()}`)
  }
  return { name, url, process: watched }
}
