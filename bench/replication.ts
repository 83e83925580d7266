// What synchronous replication costs a relay: sequential relays (one client, anvil automining) on a PostgreSQL primary
// whose commits wait for its standby's flush, against the same primary with the standby asynchronous (its floor: the
// same statements, no wait), switched back and forth on one pair (bench/soak/postgres-cluster.ts: private clusters of
// the machine's PostgreSQL behind HAProxy, fsync off) so both sides share the run's load. And one commit alone.
import { randomBytes } from 'node:crypto'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ZERO_TX_HASH } from '@docanchor/client'
import type { FastifyBaseLogger } from 'fastify'
import pg from 'pg'
import pino from 'pino'
import { buildApp } from '../src/api/app.ts'
import { startSession } from '../src/auth/sessions.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import { startTestChain, testChainContext } from '../test/helpers/chain/anvil.ts'
import { forComparison, median, printRatioTable } from './ratio-table.ts'
import { startPostgresCluster } from './soak/postgres-cluster.ts'

const ROUNDS = 5
const RELAYS_PER_ROUND = 40
const COMMITS_PER_ROUND = 200

const logDir = await mkdtemp(join(tmpdir(), 'anchor-bench-replication-'))
const [cluster, testChain] = await Promise.all([
  startPostgresCluster('sync', join(logDir, 'haproxy.log')),
  startTestChain(),
])
const database = await openDatabase({ url: cluster.url })
try {
  await migrateDatabase(database)
  const config = loadConfig({
    JWT_SECRET: randomBytes(32).toString('hex'),
    LOG_LEVEL: 'silent',
    DATABASE_URL: cluster.url,
    PLANS: 'free:1000000',
    RELAY_PER_USER_PER_MINUTE: '1000000',
  })
  const app = await buildApp({
    config,
    database,
    chain: testChainContext(testChain),
    logger: pino({ level: 'silent' }) as FastifyBaseLogger,
  })
  await app.ready()
  const email = `bench-${randomBytes(4).toString('hex')}@example.com`
  const [user] = await database.db.insert(users).values({ email }).returning()
  const { token } = await startSession(database.db, app.deps.jwt, { id: user!.id, email }, 'email')
  const relayMs = async () => {
    const started = performance.now()
    const response = await app.inject({
      method: 'POST',
      url: '/api/relay',
      headers: { authorization: `Bearer ${token}` },
      payload: {
        compositeHash: `0x${randomBytes(32).toString('hex')}`,
        previousTxHash: ZERO_TX_HASH,
        encryptedPayload: randomBytes(60).toString('base64url'),
      },
    })
    if (response.statusCode !== 201) throw new Error(`relay answered ${response.statusCode}: ${response.body}`)
    return performance.now() - started
  }
  const client = new pg.Client({ connectionString: cluster.url })
  await client.connect()
  await client.query('CREATE TABLE IF NOT EXISTS bench_commits (n int)')
  const commitMs = async () => {
    const started = performance.now()
    await client.query('INSERT INTO bench_commits VALUES (1)')
    return performance.now() - started
  }
  const sides = {
    sync: { relay: [] as number[], commit: [] as number[] },
    async: { relay: [] as number[], commit: [] as number[] },
  }
  for (let round = 0; round < ROUNDS; round++) {
    for (const mode of ['sync', 'async'] as const) {
      await cluster.setReplication(mode)
      const relays: number[] = []
      for (let i = 0; i < RELAYS_PER_ROUND; i++) relays.push(await relayMs())
      const commits: number[] = []
      for (let i = 0; i < COMMITS_PER_ROUND; i++) commits.push(await commitMs())
      sides[mode].relay.push(median(relays))
      sides[mode].commit.push(median(commits))
    }
  }
  await client.end()
  await app.close()
  const ms = (value: number) => `${value.toFixed(2)} ms`
  const relaySync = median(sides.sync.relay)
  const relayAsync = median(sides.async.relay)
  const commitSync = median(sides.sync.commit)
  const commitAsync = median(sides.async.commit)
  printRatioTable(`Synchronous replication against asynchronous, median of ${ROUNDS} alternating rounds`, [
    {
      path: `relay p50 (one client, automine), synchronous`,
      measured: ms(relaySync),
      floor: `${ms(relayAsync)} asynchronous`,
      ...forComparison(relaySync / relayAsync),
    },
    {
      path: 'one INSERT committed, synchronous',
      measured: ms(commitSync),
      floor: `${ms(commitAsync)} asynchronous`,
      ...forComparison(commitSync / commitAsync),
    },
  ])
  console.log(`a relay commits several times: it costs ${ms(relaySync - relayAsync)} more with a synchronous standby`)
} finally {
  await database.close()
  await testChain.stop()
  await cluster.stop()
  await rm(logDir, { recursive: true, force: true })
}
