// A private Redis for the soak: in memory only, on a loopback port it keeps across restarts.
import { createConnection } from 'node:net'
import { startWatched, type WatchedProcess, waitUntil } from './child-process.ts'
import { freePort } from './free-port.ts'

export interface PrivateRedis {
  url: string
  /** Stops it (its data is gone, as after a crash of a cache) and starts it again on the same port. */
  restart(): Promise<void>
  stop(): Promise<void>
  /** After stop(): starts it again on the same port. */
  start(): Promise<void>
}

export async function startPrivateRedis(): Promise<PrivateRedis> {
  const port = await freePort()
  const start = async (): Promise<WatchedProcess> => {
    const watched = startWatched('redis-server', [
      ...['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
      ...['--daemonize', 'no', '--loglevel', 'warning'],
    ])
    await waitUntil(`Redis on port ${port}\n${watched.tail()}`, () => answersPing(port), 10_000)
    return watched
  }
  let current = await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    async restart() {
      await current.stop()
      current = await start()
    },
    stop: () => current.stop(),
    async start() {
      current = await start()
    },
  }
}

function answersPing(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host: '127.0.0.1', port })
    socket.setTimeout(1_000)
    socket.once('connect', () => socket.write('PING\r\n'))
    socket.once('data', (data) => {
      socket.destroy()
      resolve(data.toString().startsWith('+PONG'))
    })
    socket.once('error', () => resolve(false))
    socket.once('timeout', () => {
      socket.destroy()
      resolve(false)
    })
  })
}
