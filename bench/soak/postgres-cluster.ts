// A private PostgreSQL cluster for the soak: initdb in a temporary directory, one port on loopback, trust auth.
// PostgreSQL refuses to run as root, so when the soak runs as root every command runs as the `postgres` user.
import { execFileSync, spawnSync } from 'node:child_process'
import { chownSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import pg from 'pg'
import { waitUntil } from './child-process.ts'
import { freePort } from './free-port.ts'

export interface PostgresCluster {
  /** The `postgres` database of the cluster, as superuser `postgres`. */
  url: string
  /** `pg_ctl restart -m fast`: every connection is cut, the cluster comes back on the same port. */
  restartFast(): Promise<void>
  stop(): Promise<void>
}

function binDir(): string {
  const versions = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(b) - Number(a))
  if (versions.length === 0) throw new Error('no PostgreSQL under /usr/lib/postgresql')
  return `/usr/lib/postgresql/${versions[0]}/bin`
}

export async function startPostgresCluster(): Promise<PostgresCluster> {
  const bin = binDir()
  const asRoot = process.getuid?.() === 0
  const run = (tool: string, args: string[]) => {
    const [command, argv] = asRoot
      ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]]
      : [join(bin, tool), args]
    execFileSync(command, argv, { stdio: ['ignore', 'pipe', 'pipe'] })
  }
  const dir = mkdtempSync(join(tmpdir(), 'anchor-soak-pg-'))
  if (asRoot) {
    const { uid, gid } = userIds('postgres')
    chownSync(dir, uid, gid)
  }
  const data = join(dir, 'data')
  const port = await freePort()
  run('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync', '-E', 'UTF8'])
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off`
  const pgCtl = (...args: string[]) => run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', options, ...args])
  pgCtl('start', '-w')
  // pg_ctl detaches the server: if the soak dies before its teardown, stop it on the way out.
  const stopNow = () =>
    spawnSync(asRoot ? 'runuser' : join(bin, 'pg_ctl'), [
      ...(asRoot ? ['-u', 'postgres', '--', join(bin, 'pg_ctl')] : []),
      ...['-D', data, '-m', 'immediate', 'stop'],
    ])
  process.on('exit', stopNow)
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`
  const ready = () => waitUntil('PostgreSQL to accept connections', () => canConnect(url))
  await ready()
  return {
    url,
    async restartFast() {
      pgCtl('restart', '-m', 'fast', '-w')
      await ready()
    },
    async stop() {
      process.off('exit', stopNow)
      stopNow()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url })
  try {
    await client.connect()
    await client.query('SELECT 1')
    return true
  } finally {
    await client.end().catch(() => {})
  }
}

function userIds(name: string): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', name], { encoding: 'utf8' }).trim())
  const gid = Number(execFileSync('id', ['-g', name], { encoding: 'utf8' }).trim())
  return { uid, gid }
}
