// A failover seen from the service's pool: a primary and its standby behind HAProxy (deploy/haproxy-postgres.cfg, the
// soak's pair), the primary SIGKILLed and the standby promoted. The first connection to the new primary tells its new
// timeline before anything else runs on it, which is what makes the relayer reconcile before it anchors again.
// Needs the machine's PostgreSQL binaries: runs with the PostgreSQL tests (DATABASE_URL set, as in CI's Node 26 pass).
import { mkdtemp, rm } from 'node:fs/promises'
import { type AddressInfo, connect, createServer, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { waitUntil } from '../../bench/soak/child-process.ts'
import { type PostgresCluster, startPostgresCluster } from '../../bench/soak/postgres-cluster.ts'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts'
import { DatabaseHistory } from '../../src/db/database-history.ts'
import { testPostgresUrl } from '../helpers/db/database.ts'

describe.runIf(testPostgresUrl !== undefined)('the history a PostgreSQL pool writes to', () => {
  let cluster: PostgresCluster
  let handle: DatabaseHandle
  let logDir: string

  beforeAll(async () => {
    logDir = await mkdtemp(join(tmpdir(), 'anchor-history-'))
    cluster = await startPostgresCluster('async', join(logDir, 'haproxy.log'))
    handle = await openDatabase({ url: cluster.url })
  }, 120_000)
  afterAll(async () => {
    await handle?.close()
    await cluster?.stop()
    if (logDir) await rm(logDir, { recursive: true, force: true })
  })

  it('tells its listeners once connections reach the promoted standby, before the first statement answers', async () => {
    if (handle.kind !== 'postgres') throw new Error('expected PostgreSQL')
    const changes: { from: string; to: string }[] = []
    handle.history.onChange((change) => changes.push(change))
    await handle.pool.query('SELECT 1')
    // A restart of the same primary is the same history.
    await cluster.restartFast()
    await untilAnswered(handle)
    expect(changes).toEqual([])

    await cluster.failOver(0)
    // The first answer comes from a new connection, whose history was read (and told) before its statement ran.
    await untilAnswered(handle)
    expect(changes).toHaveLength(1)
    const [system, timeline] = changes[0]!.from.split('/')
    expect(changes[0]!.to).toBe(
      `${system}/${(Number.parseInt(timeline!, 16) + 1).toString(16).padStart(8, '0').toUpperCase()}`,
    )
  }, 120_000)
})

describe.runIf(testPostgresUrl !== undefined)('a connection cut while its history is read', () => {
  it('fails the connect, not the process: the pool answers with the error and opens the next connection', async () => {
    const server = new URL(testPostgresUrl!)
    const cuts = { left: 1 }
    const proxy = await cuttingProxy(server.hostname, Number(server.port || 5432), cuts)
    const url = new URL(testPostgresUrl!)
    url.host = `127.0.0.1:${proxy.port}`
    const history = new DatabaseHistory()
    const pool = new pg.Pool({ connectionString: url.href, max: 1, Client: history.clientClass(pg.Client) })
    const poolErrors: Error[] = []
    pool.on('error', (error) => poolErrors.push(error))
    try {
      // Without the listener while the history is read, the cut raised an uncaught 'error' (the run fails on it).
      await expect(pool.query('SELECT 1')).rejects.toThrow(/terminated unexpectedly/)
      expect(cuts.left).toBe(0)
      expect((await pool.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }])
      expect(poolErrors).toEqual([])
    } finally {
      await pool.end()
      await proxy.close()
    }
  })
})

/** A TCP proxy to PostgreSQL that cuts a connection (while `cuts.left` lasts) when it asks the history query. */
async function cuttingProxy(
  host: string,
  port: number,
  cuts: { left: number },
): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<Socket>()
  const server = createServer((client) => {
    const upstream = connect(port, host)
    for (const socket of [client, upstream]) {
      sockets.add(socket)
      socket.on('close', () => sockets.delete(socket))
      socket.on('error', () => {})
    }
    client.on('data', (bytes) => {
      if (cuts.left > 0 && bytes.includes('pg_control_system')) {
        cuts.left--
        client.destroy()
        upstream.destroy()
      } else upstream.write(bytes)
    })
    upstream.pipe(client)
    client.on('close', () => upstream.destroy())
    upstream.on('close', () => client.destroy())
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      }),
  }
}

/** Until a statement is answered: the pool drops each connection the restart or the failover cut on its first use. */
function untilAnswered(handle: DatabaseHandle): Promise<void> {
  return waitUntil('the database to answer', () => handle.ping().then(() => true), 60_000)
}
