import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startAnvil } from '../../src/chain/anvil.ts'
import { startTestChain, type TestChain } from '../helpers/anvil.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
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
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_FEE_CACHE_MS: '600000', RELAY_WAIT_MS: '5000' },
    })
    user = await signInTestUser(t)
  })
  afterAll(async () => {
    await t?.close()
    await chain?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  it('answers 502 and leaves nothing behind, then recovers with contiguous nonces when the node is back', async () => {
    for (let i = 0; i < 2; i++) expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    const before = await snapshot(t, user.id)
    const { port } = chain.anvil
    await chain.anvil.stop()

    const single = await postRelay(t.app, user.headers, newBody())
    expect(single.statusCode).toBe(502)
    expect(single.json().code).toBe('CHAIN_UNAVAILABLE')
    expect(single.body).not.toContain('127.0.0.1')
    // Several at once: every nonce handed back, no filler left over.
    const burst = await Promise.all(Array.from({ length: 5 }, () => postRelay(t.app, user.headers, newBody())))
    expect(burst.map((r) => r.statusCode)).toEqual([502, 502, 502, 502, 502])
    expect(await snapshot(t, user.id)).toEqual(before)

    const restarted = await startAnvil({ port, stateFile: join(dir, 'state.json') })
    try {
      const after = await postRelay(t.app, user.headers, newBody())
      expect(after.statusCode).toBe(201)
      const nonces = await anchorNonces(t.database.handle.db)
      expect(nonces).toHaveLength(3)
      expect(expectContiguous(nonces)).toBe(true)
      const onChain = await chain.publicClient.getTransactionCount({ address: chain.account(0).address })
      expect(onChain).toBe(nonces[2]! + 1)
    } finally {
      await restarted.stop()
    }
  })
})
