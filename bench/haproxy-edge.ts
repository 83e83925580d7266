// HAProxy for the verify bench's edge row: the shipped deploy/haproxy.cfg, its cache included, in front of an app;
// and beside it the deployment's floor, HAProxy with the same global settings, cache section and defaults answering
// the same bytes itself (`http-request return`). Their output (an access line per request) goes nowhere, alike.
import { readFileSync } from 'node:fs'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { startWatched, type WatchedProcess, waitUntil } from './soak/child-process.ts'
import { freePort } from './soak/free-port.ts'
import type { VerifyAnswer } from './verify-answer.ts'

const SHIPPED = fileURLToPath(new URL('../deploy/haproxy.cfg', import.meta.url))

export interface Edge {
  /** The shipped configuration, every ANCHOR_INSTANCE_n the app. */
  cacheUrl: string
  /** The floor: `http-request return` of the same answer. */
  floorUrl: string
  /** The two HAProxy processes, for their CPU time. */
  cachePid: number
  floorPid: number
  stop(): Promise<void>
}

/** `instance`: host:port of the app; `answer` and `date`: what the cache will hold, for the floor to send. */
export async function startEdge(instance: string, answer: VerifyAnswer, date: string, dir: string): Promise<Edge> {
  const shipped = await readFile(SHIPPED, 'utf8')
  const [cachePort, floorPort] = [await freePort(), await freePort()]
  // The shipped file but for its cap of 100 connections per source address: every connection of the bench comes from
  // 127.0.0.1, and a round's 100 meet the last round's still closing (HAProxy then refuses them, as it should a client).
  const perSourceCap = 'tcp-request connection reject if { sc_conn_cur(0) gt 100 }'
  if (!shipped.includes(perSourceCap)) throw new Error(`deploy/haproxy.cfg no longer says "${perSourceCap}"`)
  const edgeFile = join(dir, 'haproxy-edge.cfg')
  await writeFile(edgeFile, shipped.replace(perSourceCap, perSourceCap.replace('gt 100', 'gt 10000')))
  const cache = haproxy(edgeFile, {
    ANCHOR_LB_BIND: `127.0.0.1:${cachePort}`,
    ANCHOR_INSTANCE_1: instance,
    ANCHOR_INSTANCE_2: instance,
    ANCHOR_INSTANCE_3: instance,
  })

  // Everything of the shipped file before its frontend: global (logging included), the cache section, defaults.
  const settings = shipped.slice(0, shipped.indexOf('\nfrontend '))
  const bodyFile = join(dir, 'verify-answer.json')
  await writeFile(bodyFile, answer.body)
  const { 'content-type': contentType, ...rest } = answer.headers
  // A cache hit also carries the stored Date and an Age: the floor sends them too, so both write the same bytes.
  const headers = { ...rest, date, age: '0' }
  const quoted = (value: string) => `"${value.replaceAll('\\', '\\\\').replaceAll('"', '\\"')}"`
  const floorFile = join(dir, 'haproxy-floor.cfg')
  await writeFile(
    floorFile,
    `${settings}\nfrontend floor\n  bind 127.0.0.1:${floorPort}\n  http-request return status 200 content-type ${quoted(contentType!)} file ${quoted(bodyFile)} ${Object.entries(
      headers,
    )
      .map(([name, value]) => `hdr ${name} ${quoted(value)}`)
      .join(' ')}\n`,
  )
  const floor = haproxy(floorFile, {})

  const cacheUrl = `http://127.0.0.1:${cachePort}`
  const floorUrl = `http://127.0.0.1:${floorPort}`
  await waitUntil('HAProxy with the cache', async () => (await fetch(`${cacheUrl}/readyz`)).status === 200)
  await waitUntil('HAProxy answering by itself', async () => (await fetch(floorUrl)).status === 200)
  return {
    cacheUrl,
    floorUrl,
    cachePid: cache.child.pid!,
    floorPid: floor.child.pid!,
    stop: async () => {
      await cache.stop()
      await floor.stop()
    },
  }
}

function haproxy(config: string, env: Record<string, string>): WatchedProcess {
  // -db: in the foreground, owned by the bench. Standard output (the access log) is dropped, standard error kept.
  return startWatched('haproxy', ['-db', '-f', config], {
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  })
}

/** CPU time (user + system) a process has used so far, in microseconds (Linux). */
export function cpuMicroseconds(pid: number): number {
  // The fields after the command name, which sits in parentheses and may hold spaces: utime and stime are the 12th
  // and 13th of them, in clock ticks (100 a second on Linux).
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return (Number(fields[11]) + Number(fields[12])) * 10_000
}
