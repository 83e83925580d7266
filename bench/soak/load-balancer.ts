// HAProxy with the very deploy/haproxy.cfg the runbook ships; only the addresses come from the soak, through the
// environment variables the file names.
import { fileURLToPath } from 'node:url'
import { startWatched, waitUntil } from './child-process.ts'
import { freePort } from './free-port.ts'

const CONFIG = fileURLToPath(new URL('../../deploy/haproxy.cfg', import.meta.url))

export interface LoadBalancer {
  url: string
  stop(): Promise<void>
}

/** `instances`: host:port of the three backends, in the order of the file's `server` lines. */
export async function startLoadBalancer(instances: string[], logFile: string): Promise<LoadBalancer> {
  const port = await freePort()
  const env: Record<string, string> = { PATH: process.env.PATH ?? '', ANCHOR_LB_BIND: `127.0.0.1:${port}` }
  instances.forEach((address, i) => {
    env[`ANCHOR_INSTANCE_${i + 1}`] = address
  })
  // -db: stay in the foreground, so the soak owns the process and its output.
  const haproxy = startWatched('haproxy', ['-db', '-f', CONFIG], { env, logFile })
  const url = `http://127.0.0.1:${port}`
  await waitUntil(
    `HAProxy to serve on ${url}`,
    async () => {
      if (haproxy.child.exitCode !== null) throw new Error(`haproxy exited:\n${haproxy.tail()}`)
      return (await fetch(`${url}/readyz`)).status === 200
    },
    30_000,
  )
  return { url, stop: () => haproxy.stop() }
}
