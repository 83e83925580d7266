// The soak's PostgreSQL: a primary and a streaming standby, private clusters of the machine's PostgreSQL on loopback
// (trust auth), behind HAProxy in TCP mode with deploy/haproxy-postgres.cfg, which sends connections to whichever node
// accepts writes. Replication is synchronous (nothing acknowledged is lost in a failover) or asynchronous (the last
// moments may be). PostgreSQL refuses to run as root, so when the soak runs as root every command runs as `postgres`.
import { execFile, execFileSync, spawnSync } from 'node:child_process'
import { chownSync, cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { startWatched, type WatchedProcess, waitUntil } from './child-process.ts'
import { freePort } from './free-port.ts'

const PROXY_CONFIG = fileURLToPath(new URL('../../deploy/haproxy-postgres.cfg', import.meta.url))

export type Replication = 'sync' | 'async'

export interface PostgresCluster {
  /** The `postgres` database through the proxy, as superuser `postgres`. */
  url: string
  /** Commits wait for the standby's flush (`sync`) or not, from now on (a reload, no restart). */
  setReplication(mode: Replication): Promise<void>
  /** `pg_ctl restart -m fast` of the primary: every connection is cut, it comes back as the primary. */
  restartFast(): Promise<void>
  /**
   * The failover: the standby first falls `lagMs` behind (its WAL receiver stopped: an asynchronous primary goes on
   * committing what the standby never gets), then the primary is SIGKILLed and the standby promoted. Resolves once
   * the proxy sends connections to the new primary, with how much WAL the standby had not flushed.
   */
  failOver(lagMs: number): Promise<{ standbyBehindBytes: number | undefined }>
  /** The old primary, wiped and cloned from the new one, follows it as the standby. */
  rebuildStandby(): Promise<void>
  /** A base backup of the primary now (pg_basebackup), kept until `stop`. */
  takeBaseBackup(): Promise<string>
  /** Both nodes stopped; the backup started as the primary; a standby cloned from it. */
  restore(backup: string): Promise<void>
  stop(): Promise<void>
}

interface Node {
  port: number
  data: string
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql')
  return `/usr/lib/postgresql/${versions[0]}/bin`
}

export async function startPostgresCluster(initial: Replication, logFile: string): Promise<PostgresCluster> {
  let replication = initial
  const bin = binDir()
  const asRoot = process.getuid?.() === 0
  // Asynchronous: a base backup takes seconds, and the workload must not stop while it runs.
  const run = async (tool: string, args: string[]) => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args]
    await promisify(execFile)(command, argv)
  }
  const dir = mkdtempSync(join(tmpdir(), 'anchor-soak-pg-'))
  const owned = (path: string) => {
    if (!asRoot) return
    const { uid, gid } = userIds('postgres')
    chownSync(path, uid, gid)
  }
  owned(dir)
  const options = (port: number) =>
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off ` +
    '-c wal_level=replica -c max_wal_senders=10 -c hot_standby=on -c wal_keep_size=512MB'
  const pgCtl = (node: Node, ...args: string[]) =>
    run('pg_ctl', ['-D', node.data, '-l', join(dir, `pg-${node.port}.log`), '-o', options(node.port), ...args])
  const urlOf = (port: number) => `postgres://postgres@127.0.0.1:${port}/postgres`
  const sql = (node: Node, text: string) => sqlAt(urlOf(node.port), text)
  // `-c fast`: a spread checkpoint would make the backup wait minutes for the primary's checkpoint pace.
  const baseBackup = (source: Node, data: string, ...extra: string[]) =>
    run('pg_basebackup', [
      ...['-h', '127.0.0.1', '-p', String(source.port), '-U', 'postgres', '-D', data],
      ...['-X', 'stream', '-c', 'fast', ...extra],
    ])
  const cloneFrom = (source: Node, data: string) => baseBackup(source, data, '-R')
  const streaming = (primary: Node) =>
    waitUntil(
      'the standby to stream from the primary',
      async () => (await sql(primary, "SELECT 1 FROM pg_stat_replication WHERE state = 'streaming'")).length > 0,
      60_000,
    )
  // Synchronous: a commit waits for the standby's flush. Set on the primary once its standby streams (and reset on a
  // promoted standby until its own standby follows): a primary without a standby would wait for ever.
  const setSynchronous = async (node: Node, on: boolean) => {
    await sql(node, `ALTER SYSTEM SET synchronous_standby_names = '${on ? '*' : ''}'`)
    await sql(node, 'SELECT pg_reload_conf()')
  }

  /** Synchronous, for the exit hook; a node not running makes pg_ctl fail, which is fine. */
  const stopImmediately = (node: Node) =>
    spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), [
      ...(asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []),
      ...['-D', node.data, '-m', 'immediate', 'stop'],
    ])

  let primary: Node = { port: await freePort(), data: join(dir, 'node-a') }
  let standby: Node = { port: await freePort(), data: join(dir, 'node-b') }
  const backups: string[] = []
  // pg_ctl detaches the servers: if the soak dies before its teardown (or the setup fails half-way), stop them.
  const stopNow = () => {
    for (const node of [primary, standby]) stopImmediately(node)
  }
  process.on('exit', stopNow)
  const abandon = async (error: unknown): Promise<never> => {
    process.off('exit', stopNow)
    stopNow()
    rmSync(dir, { recursive: true, force: true })
    throw error
  }
  /** The standby cloned from the primary, started and streaming (and waited for, when synchronous). */
  const followPrimary = async () => {
    await cloneFrom(primary, standby.data)
    await pgCtl(standby, 'start', '-w')
    await streaming(primary)
    if (replication === 'sync') await setSynchronous(primary, true)
  }
  await (async () => {
    await run('initdb', ['-D', primary.data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
    await pgCtl(primary, 'start', '-w')
    await followPrimary()
  })().catch(abandon)

  const proxyPort = await freePort()
  const proxyEnv = (a: Node, b: Node): Record<string, string> => ({
    PATH: process.env.PATH ?? '',
    ANCHOR_PG_BIND: `127.0.0.1:${proxyPort}`,
    ANCHOR_PG_NODE_1: `127.0.0.1:${a.port}`,
    ANCHOR_PG_NODE_2: `127.0.0.1:${b.port}`,
  })
  // The proxy's servers are the two ports for the whole run: only which of them is writable changes.
  const nodesByPort = [primary, standby]
  const proxy: WatchedProcess = startWatched('haproxy', ['-db', '-f', PROXY_CONFIG], {
    env: proxyEnv(nodesByPort[0]!, nodesByPort[1]!),
    logFile,
  })
  const url = urlOf(proxyPort)
  /**
   * Until the proxy sends every connection to `node` (ten in a row answer with its port): HAProxy starts with both
   * servers up and takes the standby out only after its checks fail.
   */
  const proxyReaches = (node: Node) =>
    waitUntil(
      `the proxy to send connections to 127.0.0.1:${node.port} only`,
      async () => {
        if (proxy.child.exitCode !== null) throw new Error(`haproxy exited:\n${proxy.tail()}`)
        for (let i = 0; i < 10; i++) {
          const rows = await sqlAt(url, "SELECT current_setting('port') AS port")
          if (Number(rows[0]?.port) !== node.port) return false
        }
        return true
      },
      60_000,
    )
  await proxyReaches(primary).catch(async (error: unknown) => {
    await proxy.stop()
    return abandon(error)
  })

  const killNode = (node: Node) => {
    const pid = Number(readFileSync(join(node.data, 'postmaster.pid'), 'utf8').split('\n')[0])
    spawnSync('pkill', ['-KILL', '-P', String(pid)])
    process.kill(pid, 'SIGKILL')
  }
  const walReceiverPid = async (node: Node) => {
    const rows = await sql(node, 'SELECT pid FROM pg_stat_wal_receiver')
    return rows[0] ? Number(rows[0].pid) : undefined
  }

  return {
    url,
    async setReplication(mode) {
      replication = mode
      await setSynchronous(primary, mode === 'sync')
    },
    async restartFast() {
      await pgCtl(primary, 'restart', '-m', 'fast', '-w')
      await proxyReaches(primary)
    },
    async failOver(lagMs) {
      const receiver = await walReceiverPid(standby)
      if (receiver !== undefined) process.kill(receiver, 'SIGSTOP')
      await new Promise((resolve) => setTimeout(resolve, lagMs))
      const [behind] = await sql(
        primary,
        'SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), flush_lsn)::bigint AS bytes FROM pg_stat_replication',
      ).catch(() => [])
      killNode(primary)
      // The receiver dies with what it had not read yet (a partition): the standby never gets those commits.
      if (receiver !== undefined) process.kill(receiver, 'SIGKILL')
      await pgCtl(standby, 'promote', '-w')
      if (replication === 'sync') await setSynchronous(standby, false)
      ;[primary, standby] = [standby, primary]
      await proxyReaches(primary)
      return { standbyBehindBytes: behind ? Number(behind.bytes) : undefined }
    },
    async rebuildStandby() {
      // The killed node's processes may linger a moment after the postmaster's death.
      stopImmediately(standby)
      rmSync(standby.data, { recursive: true, force: true })
      await followPrimary()
    },
    async takeBaseBackup() {
      const backup = join(dir, `backup-${backups.length + 1}`)
      await baseBackup(primary, backup)
      backups.push(backup)
      return backup
    },
    async restore(backup) {
      for (const node of [primary, standby]) {
        stopImmediately(node)
        rmSync(node.data, { recursive: true, force: true })
      }
      cpSync(backup, primary.data, { recursive: true })
      if (asRoot) execFileSync('chown', ['-R', 'postgres:postgres', primary.data])
      await pgCtl(primary, 'start', '-w')
      await followPrimary()
      await proxyReaches(primary)
    },
    async stop() {
      await proxy.stop()
      process.off('exit', stopNow)
      stopNow()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function sqlAt(url: string, text: string): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2_000 })
  // A node killed mid-statement fails the statement; without a listener the client's 'error' would be uncaught.
  client.on('error', () => {})
  await client.connect()
  try {
    return (await client.query(text)).rows
  } finally {
    await client.end().catch(() => {})
  }
}

function userIds(name: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim())
  return { uid, gid }
}
