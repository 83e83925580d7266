import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnvil } from '../../src/chain/anvil.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { captureLogs, type LogCapture } from '../helpers/log-capture.ts'
import { anchorNonces, count, expectContiguous, newBody, postRelay, query } from './relay-helpers.ts'

async function snapshot(t: TestApp, userId: string) {
  const db = t.database.handle.db
  const [nonce] = await query(db, sql`SELECT next_nonce FROM relayer_nonces`)
  const [user] = await query(db, sql`SELECT anchor_count FROM users WHERE id = ${userId}`)
  const [usage] = await query(db, sql`SELECT coalesce(sum(used), 0) AS used FROM anchor_usage`)
  return {
    anchors: await count(db, 'anchors'),
    transactions: await count(db, 'relay_transactions'),
    nextNonce: Number(nonce?.next_nonce),
    anchorCount: Number(user?.anchor_count),
    used: Number(usage?.used),
  }
}

describe('POST /api/relay when the node goes away', () => {
  let dir: string
  let chain: TestChain
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'relay-faults-'))
    chain = await startTestChain({ anvil: { stateFile: join(dir, 'state.json') } })
    // Fees stay cached, so with the node gone the first chain call of a relay is the broadcast itself: the signed
    // transaction is already stored when the send fails.
    t = await createTestApp({
      testChain: chain,
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_FEE_CACHE_MS: '600000', RELAY_WAIT_MS: '1500' },
    })
    user = await signInTestUser(t)
  })
  afterAll(async () => {
    await t?.close()
    await chain?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('keeps what it signed pending while the node is away, then sends it in nonce order once it is back', async () => {
    for (let i = 0; i < 2; i++) expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    const before = await snapshot(t, user.id)
    const { port } = chain.anvil
    await chain.anvil.stop()

    // A refused connection says nothing of whether an earlier attempt delivered the transaction: it stays pending,
    // counted, holding its nonce, and nothing of it is withdrawn.
    const bodies = Array.from({ length: 6 }, () => newBody())
    const single = await postRelay(t.app, user.headers, bodies[0])
    expect(single.statusCode).toBe(202)
    expect(single.json()).toMatchObject({ status: 'pending', blockNumber: null })
    const burst = await Promise.all(bodies.slice(1).map((body) => postRelay(t.app, user.headers, body)))
    expect(burst.map((r) => r.statusCode)).toEqual([202, 202, 202, 202, 202])
    expect(await snapshot(t, user.id)).toEqual({
      anchors: before.anchors + 6,
      transactions: before.transactions + 6,
      nextNonce: before.nextNonce + 6,
      anchorCount: before.anchorCount + 6,
      used: before.used + 6,
    })

    const restarted = await startAnvil({ port, stateFile: join(dir, 'state.json') })
    try {
      await t.app.relayMonitor.tick() // sends them, lowest nonce first
      await t.app.relayMonitor.tick() // records their receipts
      const answers = [single, ...burst]
      for (const [i, body] of bodies.entries()) {
        const retry = await postRelay(t.app, user.headers, body)
        expect(retry.statusCode).toBe(200)
        expect(retry.json()).toMatchObject({ txHash: answers[i]!.json().txHash, status: 'confirmed' })
      }
      const nonces = await anchorNonces(t.database.handle.db)
      expect(nonces).toHaveLength(8)
      expect(expectContiguous(nonces)).toBe(true)
      const onChain = await chain.publicClient.getTransactionCount({ address: chain.account(0).address })
      expect(onChain).toBe(nonces[7]! + 1)
    } finally {
      await restarted.stop()
    }
  })
})

describe('POST /api/relay when the node refuses the transaction for good', () => {
  let t: TestApp
  let user: SignedInUser
  let logs: LogCapture

  beforeAll(async () => {
    logs = captureLogs('info')
    // A relayer key that holds nothing: the node refuses its transactions, and its balance says why.
    t = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0' },
      logger: logs.logger,
      chainContext: () => ({ relayers: [privateKeyToAccount(generatePrivateKey())] }),
    })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('withdraws the anchor, answers 502, and logs the node’s own words without its URL', async () => {
    const before = await snapshot(t, user.id)
    const response = await postRelay(t.app, user.headers, newBody())
    expect(response.statusCode).toBe(502)
    expect(response.json()).toMatchObject({ code: 'CHAIN_UNAVAILABLE' })
    expect(response.body).not.toMatch(/funds/i)
    expect(await snapshot(t, user.id)).toEqual({ ...before, nextNonce: 0 })
    const warnings = logs.lines.filter((line) => line.includes('"level":40'))
    expect(warnings.some((line) => line.includes('Insufficient funds for gas * price + value'))).toBe(true)
    expect(warnings.join('')).not.toContain(t.testChain.rpcUrl)
  })
})
