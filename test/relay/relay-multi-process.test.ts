import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilPrivateKey } from '../../src/chain/anvil-accounts.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '../helpers/db/database.ts'
import { anchorNonces, expectContiguous, newBody, query } from './relay-helpers.ts'
import { createUserToken, httpRelay, type ServerProcess, spawnServer } from './relay-process.ts'

// Two processes can only share a database server: PGlite is one process's files. CI sets DATABASE_URL.
describe.runIf(testPostgresUrl !== undefined)(
  'two server processes on one PostgreSQL (runs when DATABASE_URL is set)',
  () => {
    let chain: TestChain
    let database: TestDatabase
    let servers: ServerProcess[] = []

    beforeAll(async () => {
      ;[chain, database] = await Promise.all([startTestChain(), createTestDatabase()])
      const env = {
        RPC_URL: chain.rpcUrl,
        CONTRACT_ADDRESS: chain.contract,
        RELAYER_PRIVATE_KEY: anvilPrivateKey(0),
        DATABASE_URL: database.url!,
        RELAY_MONITOR_INTERVAL_MS: '200',
        RELAY_STUCK_AFTER_MS: '2000',
        RELAY_WAIT_MS: '20000',
        CHAIN_POLLING_INTERVAL_MS: '20',
      }
      servers = await Promise.all([spawnServer(env), spawnServer(env)])
    }, 120_000)
    afterAll(async () => {
      await Promise.all(servers.map((server) => server.kill()))
      await database?.close()
      await chain?.stop()
    })

    it('mines 100 concurrent relays spread over both with 100 distinct, gap-free nonces', async () => {
      const users = await Promise.all(Array.from({ length: 10 }, () => createUserToken(database.handle.db)))
      const start = await chain.publicClient.getTransactionCount({ address: chain.account(0).address })
      const responses = await Promise.all(
        Array.from({ length: 100 }, (_, i) => httpRelay(servers[i % 2]!.url, users[i % 10]!.authorization, newBody())),
      )
      expect(responses.filter((r) => r.status !== 201 && r.status !== 202)).toEqual([])
      expect(new Set(responses.map((r) => r.json.txHash)).size).toBe(100)
      await expect
        .poll(
          async () =>
            Number(
              (await query(database.handle.db, sql`SELECT count(*) AS n FROM anchors WHERE status = 'confirmed'`))[0]
                ?.n,
            ),
          { timeout: 20_000 },
        )
        .toBe(100)
      const nonces = await anchorNonces(database.handle.db)
      expect(nonces).toHaveLength(100)
      expect(nonces[0]).toBe(start)
      expect(expectContiguous(nonces)).toBe(true)
      expect(await chain.publicClient.getTransactionCount({ address: chain.account(0).address })).toBe(start + 100)
    }, 60_000)
  },
)
