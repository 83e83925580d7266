import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { anchorNonces, count, expectContiguous, newBody, postRelay, query } from './relay-helpers.ts'

describe('POST /api/relay under concurrency', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        RELAY_MONITOR_INTERVAL_MS: '200',
        RELAY_STUCK_AFTER_MS: '1000',
        RELAY_WAIT_MS: '20000',
        PLANS: 'free:100,small:7',
      },
    })
  })
  afterAll(async () => t?.close())

  it('mines 200 concurrent relays from 20 users with 200 distinct, gap-free nonces', async () => {
    const users: SignedInUser[] = await Promise.all(Array.from({ length: 20 }, () => signInTestUser(t)))
    const startNonce = await t.testChain.publicClient.getTransactionCount({ address: t.testChain.account(0).address })
    const responses = await Promise.all(
      Array.from({ length: 200 }, (_, i) => postRelay(t.app, users[i % 20]!.headers, newBody())),
    )
    const statuses = responses.map((r) => r.statusCode)
    // A relay answered 202 (anvil's rare automine stall) must still end mined: the monitor heals it.
    expect(
      statuses.every((s) => s === 201 || s === 202),
      JSON.stringify(responses.find((r) => r.statusCode >= 300)?.json()),
    ).toBe(true)
    const hashes = responses.map((r) => r.json().txHash as `0x${string}`)
    expect(new Set(hashes).size).toBe(200)
    await expect.poll(async () => count(t.database.handle.db, 'anchors'), { timeout: 15_000 }).toBe(200)
    await expect
      .poll(
        async () =>
          Number(
            (await query(t.database.handle.db, sql`SELECT count(*) AS n FROM anchors WHERE status = 'confirmed'`))[0]
              ?.n,
          ),
        { timeout: 15_000 },
      )
      .toBe(200)
    const nonces = await anchorNonces(t.database.handle.db)
    expect(nonces).toHaveLength(200)
    expect(nonces[0]).toBe(startNonce)
    expect(expectContiguous(nonces)).toBe(true)
    const onChain = await t.testChain.publicClient.getTransactionCount({ address: t.testChain.account(0).address })
    expect(onChain).toBe(startNonce + 200)
    const [usage] = await query(t.database.handle.db, sql`SELECT sum(used) AS n FROM anchor_usage`)
    expect(Number(usage?.n)).toBe(200)
  })

  it('lets exactly the allowed number through when 20 requests race at the quota limit', async () => {
    const user = await signInTestUser(t)
    await t.database.handle.db.execute(sql`UPDATE users SET plan = 'small' WHERE id = ${user.id}`)
    // Two used already: five left of seven.
    for (let i = 0; i < 2; i++) expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    const responses = await Promise.all(Array.from({ length: 20 }, () => postRelay(t.app, user.headers, newBody())))
    const ok = responses.filter((r) => r.statusCode === 201 || r.statusCode === 202)
    const refused = responses.filter((r) => r.statusCode === 429)
    expect(ok).toHaveLength(5)
    expect(refused).toHaveLength(15)
    const problem = refused[0]!.json()
    expect(problem).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: 7, used: 7 })
    const now = new Date()
    expect(problem.resetsAt).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString())
    const [row] = await query(t.database.handle.db, sql`SELECT anchor_count FROM users WHERE id = ${user.id}`)
    expect(Number(row?.anchor_count)).toBe(7)
    const [anchors] = await query(
      t.database.handle.db,
      sql`SELECT count(*) AS n FROM anchors WHERE user_id = ${user.id}`,
    )
    expect(Number(anchors?.n)).toBe(7)
  })
})
