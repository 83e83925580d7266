// reserve_anchors on its own (drizzle/functions/reserve_anchors.sql): a batch mixes users, limits and taken hashes, and
// each item must come out exactly as if it had been reserved alone, in order.
import { randomBytes } from 'node:crypto'
import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/database.ts'
import { quotaPeriod, UNSIGNED_PREFIX, users } from '../../src/db/schema.ts'
import { ensureNonceRow } from '../../src/relayer/outbox/nonces.ts'
import { attachSigned, type NewAnchor, reserveAnchors } from '../../src/relayer/outbox/reservations.ts'
import type { Slot } from '../../src/relayer/outbox/slot.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { query, randomHash } from './relay-helpers.ts'

const { period } = quotaPeriod()
const QUOTA = { plans: { free: 3, pro: 100, closed: 0 }, defaultPlan: 'free' }

describe('reserveAnchors', () => {
  let database: TestDatabase
  let db: Database
  let slot: Slot

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
  })
  afterAll(async () => database?.close())

  beforeEach(async () => {
    // A relayer of its own per test: nonces start at 0.
    slot = { chainId: 31337, relayer: `0x${randomBytes(20).toString('hex')}` }
    await ensureNonceRow(db, slot, 0)
  })

  async function newUser(plan = 'free'): Promise<string> {
    const [row] = await db
      .insert(users)
      .values({ email: `${randomBytes(6).toString('hex')}@example.com`, plan })
      .returning()
    return row!.id
  }

  const anchor = (userId: string, compositeHash = randomHash()): NewAnchor => ({
    compositeHash,
    previousTxHash: ZERO_TX_HASH,
    encryptedPayload: randomBytes(40).toString('base64url'),
    userId,
    period,
  })

  async function counts(userId: string) {
    const result = await db.execute(
      sql`SELECT (SELECT anchor_count FROM users WHERE id = ${userId}) AS anchor_count,
                 (SELECT used FROM anchor_usage WHERE user_id = ${userId} AND period = ${period}) AS used,
                 (SELECT count(*) FROM anchors WHERE user_id = ${userId}) AS anchors`,
    )
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!
    return { anchorCount: Number(row.anchor_count), used: Number(row.used ?? 0), anchors: Number(row.anchors) }
  }

  it('reserves a mixed batch item by item: quota per user, taken hashes undone alone, contiguous nonces', async () => {
    const alice = await newUser()
    const bob = await newUser('pro')
    const taken = anchor(bob)
    expect(await reserveAnchors(db, slot, [taken], QUOTA)).toMatchObject([{ kind: 'reserved', nonce: 0 }])

    const results = await reserveAnchors(
      db,
      slot,
      [
        anchor(alice),
        anchor(alice),
        { ...anchor(alice), compositeHash: taken.compositeHash }, // taken: undone, alice's count with it
        anchor(bob),
        anchor(alice), // alice's third: still within 3
        anchor(alice), // alice's fourth: over
      ],
      QUOTA,
    )
    expect(results.map((r) => r.kind)).toEqual([
      'reserved',
      'reserved',
      'exists',
      'reserved',
      'reserved',
      'quota_exceeded',
    ])
    expect(results[5]).toEqual({ kind: 'quota_exceeded', limit: 3, used: 3 })
    // Nonces in whatever order the function worked in (by user), but exactly the next four.
    const nonces = results.flatMap((r) => (r.kind === 'reserved' ? [r.nonce] : []))
    expect([...nonces].sort((a, b) => a - b)).toEqual([1, 2, 3, 4])
    expect(await counts(alice)).toEqual({ anchorCount: 3, used: 3, anchors: 3 })
    expect(await counts(bob)).toEqual({ anchorCount: 2, used: 2, anchors: 2 })
    const [next] = (
      (await db.execute(
        sql`SELECT next_nonce FROM relayer_nonces WHERE relayer_address = ${slot.relayer}`,
      )) as unknown as { rows: { next_nonce: unknown }[] }
    ).rows
    expect(Number(next!.next_nonce)).toBe(5)
  })

  it('stores each reserved anchor as given, unsigned, on this relayer', async () => {
    const user = await newUser()
    const item = anchor(user)
    const [reserved] = await reserveAnchors(db, slot, [item], QUOTA)
    if (reserved?.kind !== 'reserved') throw new Error('expected a reservation')
    const result = await db.execute(sql`SELECT * FROM anchors WHERE id = ${reserved.anchorId}`)
    const row = (result as unknown as { rows: Record<string, unknown>[] }).rows[0]!
    expect(row).toMatchObject({
      composite_hash: item.compositeHash,
      previous_tx_hash: item.previousTxHash,
      encrypted_payload: item.encryptedPayload,
      user_id: user,
      status: 'pending',
      relayer_address: slot.relayer,
      chain_id: slot.chainId,
    })
    expect(String(row.tx_hash).startsWith(UNSIGNED_PREFIX)).toBe(true)
  })

  it('undoes a hash repeated within one batch on its own, and reuses the lowest unsent filler first', async () => {
    const user = await newUser('pro')
    await db.execute(
      sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                          max_fee_per_gas, max_priority_fee_per_gas)
          VALUES (${randomHash()}, NULL, ${slot.chainId}, ${slot.relayer}, 7, '0x00', '1', '1')`,
    )
    const twice = anchor(user)
    const results = await reserveAnchors(db, slot, [twice, { ...twice }, anchor(user)], QUOTA)
    expect(results).toEqual([
      { kind: 'reserved', anchorId: expect.any(String), nonce: 7 },
      { kind: 'exists' },
      { kind: 'reserved', anchorId: expect.any(String), nonce: 0 },
    ])
    expect(await counts(user)).toEqual({ anchorCount: 2, used: 2, anchors: 2 })
  })

  it('runs batches of two relayers at once over the same users in opposite orders without a deadlock', async () => {
    // On PostgreSQL the two calls run on two connections at once; locks taken item by item in the order given meet
    // in a cycle (one batch holding user A and wanting B, the other holding B and wanting A) and PostgreSQL aborts one.
    // The function is called directly here: reserveAnchors would retry an aborted batch and hide the deadlock.
    const other: Slot = { chainId: slot.chainId, relayer: `0x${randomBytes(20).toString('hex')}` }
    await ensureNonceRow(db, other, 0)
    const people = await Promise.all(Array.from({ length: 6 }, () => newUser('pro')))
    const reserveRaw = (on: Slot, items: NewAnchor[]) =>
      query<{ item: unknown; outcome: string }>(
        db,
        sql`SELECT item, outcome FROM reserve_anchors(${on.chainId}::int, ${on.relayer}::text,
              ${JSON.stringify(QUOTA.plans)}::jsonb, 3, ${JSON.stringify(items)}::jsonb)`,
      )
    for (let round = 0; round < 15; round++) {
      const [forward, backward] = await Promise.all([
        reserveRaw(
          slot,
          people.map((user) => anchor(user)),
        ),
        reserveRaw(
          other,
          [...people].reverse().map((user) => anchor(user)),
        ),
      ])
      expect([...forward, ...backward].every((row) => row.outcome === 'reserved')).toBe(true)
    }
    for (const user of people) expect(await counts(user)).toEqual({ anchorCount: 30, used: 30, anchors: 30 })
  })

  it('settles a composite hash raced by two relayers over shared users, retrying a batch aborted by a deadlock', async () => {
    // Batch one stores hash H for user A, then wants user B; batch two holds user B and waits on H: a cycle the lock
    // order cannot prevent, which PostgreSQL breaks by aborting one batch. That batch runs again and finds H taken.
    const other: Slot = { chainId: slot.chainId, relayer: `0x${randomBytes(20).toString('hex')}` }
    await ensureNonceRow(db, other, 0)
    const [a, b] = (await Promise.all([newUser('pro'), newUser('pro')])).sort()
    for (let round = 0; round < 10; round++) {
      const raced = anchor(a!)
      const [first, second] = await Promise.all([
        reserveAnchors(db, slot, [raced, anchor(b!)], QUOTA),
        reserveAnchors(db, other, [{ ...raced, userId: b! }, anchor(b!)], QUOTA),
      ])
      // Exactly one batch got the raced hash; every other item stands.
      expect([first[0]!.kind, second[0]!.kind].sort()).toEqual(['exists', 'reserved'])
      expect([first[1]!.kind, second[1]!.kind]).toEqual(['reserved', 'reserved'])
    }
  })

  it('reports a plan without anchors, an unknown plan at the default limit, and a deleted user', async () => {
    const closed = await newUser('closed')
    const unknownPlan = await newUser('legacy')
    const gone = await newUser()
    await db.execute(sql`DELETE FROM users WHERE id = ${gone}`)
    const results = await reserveAnchors(
      db,
      slot,
      [anchor(closed), ...Array.from({ length: 4 }, () => anchor(unknownPlan)), anchor(gone)],
      QUOTA,
    )
    expect(results.map((r) => r.kind)).toEqual([
      'quota_exceeded',
      'reserved',
      'reserved',
      'reserved',
      'quota_exceeded',
      'no_user',
    ])
    expect(results[0]).toEqual({ kind: 'quota_exceeded', limit: 0, used: 0 })
    expect(await counts(closed)).toEqual({ anchorCount: 0, used: 0, anchors: 0 })
    // Nonces went only to the three reserved items.
    expect(results.filter((r) => r.kind === 'reserved').map((r) => r.nonce)).toEqual([0, 1, 2])
  })
  it('attaches a signed transaction only while its anchor still holds the nonce it was signed for', async () => {
    const alice = await newUser()
    const [reserved] = await reserveAnchors(db, slot, [anchor(alice)], QUOTA)
    if (reserved?.kind !== 'reserved') throw new Error('expected a reservation')
    const signedAt = (nonce: number) => ({
      anchorId: reserved.anchorId,
      nonce,
      signed: { raw: randomHash(), hash: randomHash(), fees: { maxFeePerGas: 2n, maxPriorityFeePerGas: 1n } },
    })
    // A reconciliation moved the unsigned anchor off a nonce the chain consumed while its request was signing.
    await db.execute(sql`UPDATE anchors SET nonce = 7 WHERE id = ${reserved.anchorId}`)
    expect(await attachSigned(db, slot, [signedAt(reserved.nonce)])).toEqual([false])
    expect(
      await query(db, sql`SELECT count(*)::int AS n FROM relay_transactions WHERE anchor_id = ${reserved.anchorId}`),
    ).toEqual([{ n: 0 }])
    expect(await attachSigned(db, slot, [signedAt(7)])).toEqual([true])
  })
})
