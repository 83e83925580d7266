// Builds the real app for a test file: a migrated database, a fresh anvil chain with the contract, a test config.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { buildApp } from '../../src/api/app.ts'
import type { AppInstance } from '../../src/api/app-types.ts'
import type { TrustProvider } from '../../src/auth/jwt.ts'
import { startSession } from '../../src/auth/sessions.ts'
import type { ChainContext } from '../../src/chain/chain-context.ts'
import type { Env } from '../../src/config/env-fields.ts'
import { type Config, loadConfig } from '../../src/config/load-config.ts'
import { users } from '../../src/db/schema.ts'
import { type StartTestChainOptions, startTestChain, type TestChain, testChainContext } from './chain/anvil.ts'
import { createTestDatabase, type TestDatabase } from './db/database.ts'

export const TEST_JWT_SECRET = 'test-secret-that-is-at-least-32-bytes-long!'

export interface TestApp {
  app: AppInstance
  config: Config
  database: TestDatabase
  testChain: TestChain
  chain: ChainContext
  dataDir: string
  close(): Promise<void>
}

export interface CreateTestAppOptions {
  /** Extra environment variables for the config (limits, plans, ...). */
  env?: Env
  chain?: StartTestChainOptions
  /** Reuse a chain started by the test file (not stopped by close()). */
  testChain?: TestChain
  /** Replaces parts of the app's view of the chain (its client, its relayer keys). */
  chainContext?: (testChain: TestChain) => Partial<ChainContext>
  logger?: FastifyBaseLogger
  /** Registers extra routes or hooks before the app is ready (probe routes in tests). */
  setup?: (app: AppInstance) => void
}

export function testConfig(env: Env = {}, dataDir = join(tmpdir(), 'anchor-test')): Config {
  return loadConfig({ DATA_DIR: dataDir, JWT_SECRET: TEST_JWT_SECRET, LOG_LEVEL: 'silent', ...env })
}

export async function createTestApp(options: CreateTestAppOptions = {}): Promise<TestApp> {
  const dataDir = await mkdtemp(join(tmpdir(), 'anchor-test-'))
  const config = testConfig(options.env, dataDir)
  const [database, testChain] = await Promise.all([
    createTestDatabase(),
    options.testChain ? Promise.resolve(options.testChain) : startTestChain(options.chain),
  ])
  const chain = testChainContext(testChain, options.chainContext?.(testChain))
  const app = await buildApp({
    config,
    database: database.handle,
    chain,
    logger: options.logger ?? (pino({ level: 'silent' }) as FastifyBaseLogger),
  })
  options.setup?.(app)
  await app.ready()
  return {
    app,
    config,
    database,
    testChain,
    chain,
    dataDir,
    async close() {
      await app.close()
      await database.close()
      if (!options.testChain) await testChain.stop()
      await rm(dataDir, { recursive: true, force: true })
    },
  }
}

export interface SignedInUser {
  id: string
  email: string
  token: string
  sessionId: string
  /** `{ authorization: 'Bearer ...' }` for inject(). */
  headers: { authorization: string }
}

/** Creates (or finds) a user and signs it in directly, as a successful sign-in would. */
export async function signInTestUser(
  testApp: Pick<TestApp, 'app'>,
  email = `user-${crypto.randomUUID()}@example.com`,
  trust: TrustProvider = 'email',
): Promise<SignedInUser> {
  const { database, jwt } = testApp.app.deps
  const [row] = await database.db
    .insert(users)
    .values({ email, authProvider: trust })
    .onConflictDoUpdate({ target: users.email, set: { email } })
    .returning()
  const session = await startSession(database.db, jwt, { id: row!.id, email }, trust)
  return {
    id: row!.id,
    email,
    token: session.token,
    sessionId: session.sessionId,
    headers: { authorization: `Bearer ${session.token}` },
  }
}
