// `npm run admin` as an operator runs it: the real entry point, a process of its own, against PostgreSQL (a throwaway
// database on the machine's server, whatever the suite runs on). Every command must end by itself: with a pool of one
// connection the migrator waited forever for a second one while it held its lock on the first (issue 39, item 8).
import { execFile } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createThrowawayDatabase, type ThrowawayDatabase } from '../helpers/db/throwaway-postgres.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const SERVER = 'postgres://postgres@127.0.0.1:5432/postgres'

let database: ThrowawayDatabase
let dataDir: string

beforeAll(async () => {
  database = await createThrowawayDatabase(SERVER, 'anchor_admin')
  dataDir = await mkdtemp(join(tmpdir(), 'admin-entry-'))
}, 60_000)

afterAll(async () => {
  await database?.drop()
  if (dataDir) await rm(dataDir, { recursive: true, force: true })
})

/** `npm run admin -- …argv`, given at most 60 s to end by itself. */
async function admin(...argv: string[]) {
  return promisify(execFile)('npm', ['run', '--silent', 'admin', '--', ...argv], {
    cwd: ROOT,
    timeout: 60_000,
    killSignal: 'SIGKILL',
    env: { PATH: process.env.PATH ?? '', HOME: dataDir, DATA_DIR: dataDir, DATABASE_URL: database.url },
  }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number | string; killed?: boolean; stdout?: string; stderr?: string }) => {
      if (error.killed) throw new Error(`npm run admin -- ${argv.join(' ')} did not end within 60 s`)
      return { code: Number(error.code), stdout: error.stdout ?? '', stderr: error.stderr ?? '' }
    },
  )
}

describe('npm run admin on PostgreSQL, through its entry point', () => {
  it('migrates a new database and ends, for an account that does not exist', async () => {
    const run = await admin('users', 'show', 'nobody@example.com')
    expect(run.stderr).toContain('admin: no account "nobody@example.com"')
    expect(run.code).toBe(1)
  }, 120_000)

  it('shows and changes an account, and ends each time', async () => {
    const client = new pg.Client({ connectionString: database.url })
    await client.connect()
    try {
      await client.query(`INSERT INTO users (email) VALUES ('ada@example.com')`)
    } finally {
      await client.end()
    }
    const shown = await admin('users', 'show', 'ada@example.com', '--json')
    expect(shown.code).toBe(0)
    expect(JSON.parse(shown.stdout)).toMatchObject({ email: 'ada@example.com', plan: 'free' })
    for (const argv of [
      ['users', 'limit', 'ada@example.com', '5', '--operator', 'grace'],
      ['users', 'block', 'ada@example.com', '--operator', 'grace'],
      ['users', 'unblock', 'ada@example.com', '--operator', 'grace'],
    ]) {
      const run = await admin(...argv)
      expect(run.code, `${argv.join(' ')}: ${run.stderr}`).toBe(0)
    }
    expect(JSON.parse((await admin('users', 'show', 'ada@example.com', '--json')).stdout)).toMatchObject({
      monthlyLimit: 5,
      blockedAt: null,
    })
  }, 300_000)
})
