// What webhooks cost (issue 41). First, a relay of an account with webhooks registered against one of an account
// without (the same app, alternating rounds of sequential relays through inject, anvil automining): the event and its
// fan-out are written in the relay's own transaction, so this is their price; the aim is within 5 %. Second, how many
// deliveries one instance sustains: a backlog of events to 8 endpoints (the dispatcher's concurrency) of a bare local
// receiver, drained by the real dispatcher (claim, sign, POST, record), against the floor of the same POSTs sent by 8
// bare sequential loops to the same receiver. PGlite by default; PostgreSQL when DATABASE_URL is set.
import { createServer, request } from 'node:http'
import type { AddressInfo } from 'node:net'
import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { buildApp } from '../src/api/app.ts'
import { startSession } from '../src/auth/sessions.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import { startTestChain, testChainContext } from '../test/helpers/chain/anvil.ts'
import { createThrowawayDatabase } from '../test/helpers/db/throwaway-postgres.ts'
import { median, printRatioTable } from './ratio-table.ts'

const ROUNDS = 5
const RELAYS_PER_ROUND = 60
const WEBHOOKS = 3
const ENDPOINTS = 8
const EVENTS = 250
const BODY = JSON.stringify({
  type: 'anchor.confirmed',
  timestamp: new Date().toISOString(),
  data: { txHash: `0x${'a'.repeat(64)}`, compositeHash: `0x${'b'.repeat(64)}`, previousTxHash: ZERO_TX_HASH },
})

const receiver = createServer((incoming, response) => {
  incoming.resume().on('end', () => response.writeHead(204).end())
})
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve))
const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const adminUrl = process.env.DATABASE_URL
const throwaway = adminUrl ? await createThrowawayDatabase(adminUrl, 'anchor_bench') : undefined
const handle = await openDatabase({ url: throwaway?.url })
await migrateDatabase(handle)
const testChain = await startTestChain()
const config = loadConfig({
  JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
  LOG_LEVEL: 'silent',
  PLANS: 'free:1000000',
  RELAY_PER_USER_PER_MINUTE: '1000000',
  RELAY_MONITOR_INTERVAL_MS: '0',
  WEBHOOK_DISPATCH_INTERVAL_MS: '0',
})
const app = await buildApp({
  config,
  database: handle,
  chain: testChainContext(testChain),
  logger: pino({ level: 'silent' }) as FastifyBaseLogger,
})
await app.ready()

async function account(webhooks: number) {
  const email = `bench-${crypto.randomUUID()}@example.com`
  const [row] = await handle.db.insert(users).values({ email }).returning()
  const session = await startSession(handle.db, app.deps.jwt, { id: row!.id, email }, 'email')
  const headers = { authorization: `Bearer ${session.token}` }
  for (let i = 0; i < webhooks; i++) {
    const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers, payload: { url: hookUrl } })
    if (created.statusCode !== 201) throw new Error(`webhook not registered: ${created.body}`)
  }
  return { id: row!.id, headers }
}

/** Relays per second of `RELAYS_PER_ROUND` sequential relays. */
async function relayRound(headers: Record<string, string>): Promise<number> {
  const started = performance.now()
  for (let i = 0; i < RELAYS_PER_ROUND; i++) {
    const payload = {
      compositeHash: `0x${Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('hex')}`,
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: Buffer.from(crypto.getRandomValues(new Uint8Array(60))).toString('base64url'),
    }
    const response = await app.inject({ method: 'POST', url: '/api/relay', headers, payload })
    if (response.statusCode !== 201) throw new Error(`relay answered ${response.statusCode}: ${response.body}`)
  }
  return RELAYS_PER_ROUND / ((performance.now() - started) / 1000)
}

/** The floor of deliveries: 8 sequential loops of the same POST, a fresh connection each, as the dispatcher sends. */
async function bareDeliveries(total: number): Promise<number> {
  const post = () =>
    new Promise<void>((resolve, reject) => {
      const sent = request(hookUrl, {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(BODY) },
      })
      sent.on('response', (response) => response.resume().on('end', resolve))
      sent.on('error', reject)
      sent.end(BODY)
    })
  const started = performance.now()
  await Promise.all(
    Array.from({ length: ENDPOINTS }, async () => {
      for (let i = 0; i < total / ENDPOINTS; i++) await post()
    }),
  )
  return total / ((performance.now() - started) / 1000)
}

async function dispatcherDeliveries(userId: string): Promise<number> {
  await handle.db.execute(
    sql`INSERT INTO events (id, user_id, type, data)
        SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), ${userId}, 'anchor.confirmed', ${BODY}::jsonb -> 'data'
        FROM generate_series(1, ${EVENTS})`,
  )
  const started = performance.now()
  const attempted = await app.webhookDispatcher.tick()
  if (attempted !== EVENTS * ENDPOINTS) throw new Error(`the dispatcher attempted ${attempted} deliveries`)
  return attempted / ((performance.now() - started) / 1000)
}

const plain = await account(0)
const hooked = await account(WEBHOOKS)
const withoutRates: number[] = []
const withRates: number[] = []
await relayRound(plain.headers) // warm-up
for (let round = 0; round < ROUNDS; round++) {
  // Each goes first in turn, so that neither gains from the process warming up within a round.
  if (round % 2 === 0) {
    withoutRates.push(await relayRound(plain.headers))
    withRates.push(await relayRound(hooked.headers))
  } else {
    withRates.push(await relayRound(hooked.headers))
    withoutRates.push(await relayRound(plain.headers))
  }
}
// The relays' own deliveries first, so that the rounds below drain only their events.
await app.webhookDispatcher.tick()
const endpointOwner = await account(ENDPOINTS)
const dispatched: number[] = []
const bare: number[] = []
for (let round = 0; round < 3; round++) {
  bare.push(await bareDeliveries(EVENTS * ENDPOINTS))
  dispatched.push(await dispatcherDeliveries(endpointOwner.id))
}

const [relayWithout, relayWith] = [median(withoutRates), median(withRates)]
const [deliveries, floor] = [median(dispatched), median(bare)]
printRatioTable(
  `webhooks: median of ${ROUNDS} rounds of ${RELAYS_PER_ROUND} sequential relays; 3 of ${EVENTS * ENDPOINTS} deliveries (${handle.kind})`,
  [
    {
      path: `relay with ${WEBHOOKS} webhooks registered, sequential`,
      measured: `${relayWith.toFixed(1)} relays/s`,
      floor: `${relayWithout.toFixed(1)} relays/s without`,
      ratio: relayWith / relayWithout,
      aim: '≥ 0.95×',
      met: relayWith / relayWithout >= 0.95,
    },
    {
      path: `webhook deliveries, ${ENDPOINTS} endpoints, one instance`,
      measured: `${deliveries.toFixed(0)} deliveries/s`,
      floor: `${floor.toFixed(0)} bare POSTs/s`,
      ratio: deliveries / floor,
      aim: '—',
      met: true,
    },
  ],
)
console.log(
  `  rounds, relays/s: without ${withoutRates.map((r) => r.toFixed(1)).join(' / ')}; with ${withRates.map((r) => r.toFixed(1)).join(' / ')}`,
)
console.log(
  `  rounds, deliveries/s: dispatcher ${dispatched.map((r) => r.toFixed(0)).join(' / ')}; bare ${bare.map((r) => r.toFixed(0)).join(' / ')}`,
)

await app.close()
await handle.close()
await throwaway?.drop()
await testChain.stop()
receiver.close()
