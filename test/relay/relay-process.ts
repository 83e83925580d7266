// Real server processes for the multi-process and crash tests: spawned, awaited until they listen, killed.
import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { inject } from 'vitest'
import type { JwtSettings } from '../../src/auth/jwt.ts'
import { startSession } from '../../src/auth/sessions.ts'
import { anvilPrivateKey } from '../../src/chain/anvil-accounts.ts'
import { type Database, openDatabase, pgliteDirectory } from '../../src/db/database.ts'
import { users } from '../../src/db/schema.ts'
import { TEST_JWT_SECRET } from '../helpers/app.ts'
import type { TestChain } from '../helpers/chain/anvil.ts'
import type { TestDatabase } from '../helpers/db/database.ts'

const SERVER = fileURLToPath(new URL('./fixtures/relay-server.ts', import.meta.url))

export const CHILD_JWT: JwtSettings = {
  secret: TEST_JWT_SECRET,
  issuer: 'document-anchoring-service',
  audience: 'document-anchoring-app',
}

export interface ServerProcess {
  url: string
  child: ChildProcess
  output: string[]
  kill(signal?: NodeJS.Signals): Promise<void>
}

export async function spawnServer(env: Record<string, string>): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['--conditions=@docanchor/source', '--import', 'tsx', SERVER], {
    env: { PATH: process.env.PATH, JWT_SECRET: TEST_JWT_SECRET, PORT: '0', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output: string[] = []
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join('\n')}`)), 60_000)
    for (const stream of [child.stdout!, child.stderr!]) {
      createInterface({ input: stream }).on('line', (line) => {
        output.push(line)
        const ready = /^READY (\S+)$/.exec(line)
        if (ready) {
          clearTimeout(timer)
          resolve(ready[1]!)
        }
      })
    }
    child.once('exit', (code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code}:\n${output.join('\n')}`))
    })
  })
  return {
    url,
    child,
    output,
    async kill(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal)
      await exited
    },
  }
}

/** A user with a live session in `db`, signed with the key the spawned servers use. */
export async function createUserToken(db: Database): Promise<{ id: string; authorization: string }> {
  const email = `user-${crypto.randomUUID()}@example.com`
  const [row] = await db.insert(users).values({ email }).returning()
  const session = await startSession(db, CHILD_JWT, { id: row!.id, email }, 'email')
  return { id: row!.id, authorization: `Bearer ${session.token}` }
}

/**
 * A user of the database the spawned servers open: the test's throwaway PostgreSQL database, or on PGlite the files
 * under `dataDir`, made from the run's migrated template (a fresh initdb costs seconds) and closed again for a server.
 */
export async function createServerUser(
  dataDir: string,
  database: TestDatabase | undefined,
): Promise<{ id: string; authorization: string }> {
  if (database) return createUserToken(database.handle.db)
  const template = new Blob([await readFile(inject('pgliteTemplatePath'))])
  const handle = await openDatabase({ pgliteDir: pgliteDirectory(dataDir), pgliteTemplate: template })
  try {
    return await createUserToken(handle.db)
  } finally {
    await handle.close()
  }
}

/** What every spawned server of a crash test is given: the chain, the relayer key, and the database it shares. */
export function serverEnv(chain: TestChain, dataDir: string, database: TestDatabase | undefined) {
  return {
    RPC_URL: chain.rpcUrl,
    CONTRACT_ADDRESS: chain.contract,
    RELAYER_PRIVATE_KEY: anvilPrivateKey(0),
    DATA_DIR: dataDir,
    ...(database?.url && { DATABASE_URL: database.url }),
    CHAIN_POLLING_INTERVAL_MS: '20',
  }
}

export async function httpRelay(url: string, authorization: string, body: object) {
  const response = await fetch(`${url}/api/relay`, {
    method: 'POST',
    headers: { authorization, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  })
  return { status: response.status, json: (await response.json()) as Record<string, unknown> }
}
