// The events of an account, recorded by the relayer's own writers in the transactions that change an anchor, and read
// through GET /api/events as a client follows them: a relay confirmed, countersigned by someone else, reorged out and
// mined again, final, failed; once each, with what a receiver needs to find the anchor on chain itself.
import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import pg from 'pg'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { markMined } from '../../src/relayer/outbox/anchors.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { testPostgresUrl } from '../helpers/db/database.ts'
import { newBody, poolMined, postRelay, query, relayMined, rpc } from '../relay/relay-helpers.ts'

interface FeedEvent {
  id: string
  type: string
  timestamp: string
  data: Record<string, unknown>
}

async function feed(t: TestApp, user: SignedInUser, after?: string, limit?: number) {
  const params = new URLSearchParams()
  if (after !== undefined) params.set('after', after)
  if (limit !== undefined) params.set('limit', String(limit))
  const response = await t.app.inject({ method: 'GET', url: `/api/events?${params}`, headers: user.headers })
  expect(response.statusCode).toBe(200)
  return response.json() as { events: FeedEvent[]; nextCursor: string }
}

/**
 * The feed once it has caught up with every event of the user recorded so far: it holds events back while any writer
 * that began before them still runs (on a shared PostgreSQL, other test files' writers too).
 */
async function caughtUp(t: TestApp, user: SignedInUser, after?: string) {
  const [row] = await query<{ last: unknown }>(
    t.database.handle.db,
    sql`SELECT coalesce(max(seq), 0) AS last FROM events WHERE user_id = ${user.id}`,
  )
  const last = BigInt(String(row!.last))
  let page = await feed(t, user, after)
  for (let waited = 0; BigInt(page.nextCursor) < last && waited < 15_000; waited += 50) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    page = await feed(t, user, after)
  }
  return page
}

/** What the chain says of a transaction's anchor: its block and the position of its DocumentAnchored event. */
async function onChain(t: TestApp, txHash: Hex) {
  const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: txHash })
  const log = receipt.logs.find((l) => l.address.toLowerCase() === t.chain.contractAddress.toLowerCase())!
  return { blockNumber: Number(receipt.blockNumber), blockHash: receipt.blockHash, logIndex: log.logIndex }
}

describe('the events of an account', () => {
  let t: TestApp
  let alice: SignedInUser
  let bob: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', FINALITY_CONFIRMATIONS: '3' } })
    alice = await signInTestUser(t)
    bob = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('tell of a confirmed relay once, with what finds it on chain, however often it is recorded again', async () => {
    const before = await caughtUp(t, alice)
    const body = newBody()
    const txHash = await relayMined(t.app, alice.headers, body)
    await relayMined(t.app, alice.headers, body)
    await t.app.relayMonitor.tick()
    await t.app.relayMonitor.tick()
    const { events, nextCursor } = await caughtUp(t, alice, before.nextCursor)
    expect(events).toEqual([
      {
        id: expect.stringMatching(/^evt_[0-9a-f]{32}$/),
        type: 'anchor.confirmed',
        timestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
        data: {
          txHash,
          compositeHash: body.compositeHash,
          previousTxHash: ZERO_TX_HASH,
          chainId: t.chain.chainId,
          contractAddress: t.chain.contractAddress.toLowerCase(),
          ...(await onChain(t, txHash)),
        },
      },
    ])
    expect((await caughtUp(t, alice, nextCursor)).events).toEqual([])
    expect((await caughtUp(t, alice, nextCursor)).nextCursor).toBe(nextCursor)
  })

  it('tell the signer before of a countersignature by someone else, naming both anchors, and no one else', async () => {
    const first = newBody()
    const firstTx = await relayMined(t.app, alice.headers, first)
    const aliceBefore = await caughtUp(t, alice)
    const bobBefore = await caughtUp(t, bob)
    const counter = newBody(firstTx)
    const counterTx = await relayMined(t.app, bob.headers, counter)
    const [countersigned, ...rest] = (await caughtUp(t, alice, aliceBefore.nextCursor)).events
    expect(rest).toEqual([])
    expect(countersigned).toMatchObject({
      type: 'anchor.countersigned',
      data: {
        txHash: firstTx,
        compositeHash: first.compositeHash,
        previousTxHash: ZERO_TX_HASH,
        ...(await onChain(t, firstTx)),
        countersignature: {
          txHash: counterTx,
          compositeHash: counter.compositeHash,
          blockNumber: (await onChain(t, counterTx)).blockNumber,
        },
      },
    })
    expect(JSON.stringify(countersigned)).not.toContain(bob.email)
    expect((await caughtUp(t, bob, bobBefore.nextCursor)).events.map((e) => [e.type, e.data.txHash])).toEqual([
      ['anchor.confirmed', counterTx],
    ])
  })

  it('do not tell a signer of their own countersignature as someone else’s', async () => {
    const firstTx = await relayMined(t.app, alice.headers, newBody())
    const before = await caughtUp(t, alice)
    const againTx = await relayMined(t.app, alice.headers, newBody(firstTx))
    expect((await caughtUp(t, alice, before.nextCursor)).events.map((e) => [e.type, e.data.txHash])).toEqual([
      ['anchor.confirmed', againTx],
    ])
  })

  it('tell of a reorg that took the anchor out, then of its confirmation in its new block', async () => {
    const body = newBody()
    const relayed = await postRelay(t.app, alice.headers, body)
    expect(relayed.statusCode).toBe(201)
    const txHash = relayed.json().txHash as Hex
    const before = await caughtUp(t, alice)
    const lostBlock = await onChain(t, txHash)
    await rpc(t.testChain.rpcUrl, 'anvil_reorg', [1, []])
    await t.app.relayMonitor.tick() // notices the block lost it
    await t.app.relayMonitor.tick() // re-sends the same transaction
    await poolMined(t.testChain)
    await t.app.relayMonitor.tick() // records its new block
    const now = await onChain(t, txHash)
    expect(now.blockHash).not.toBe(lostBlock.blockHash)
    // Its own events: the blocks mined meanwhile made earlier anchors final.
    const events = (await caughtUp(t, alice, before.nextCursor)).events.filter((e) => e.data.txHash === txHash)
    expect(events.map((e) => [e.type, e.data.blockHash])).toEqual([
      ['anchor.reorged', lostBlock.blockHash],
      ['anchor.confirmed', now.blockHash],
    ])
    expect(new Set(events.map((e) => e.id)).size).toBe(2)
  })

  it('tell of an anchor final once it is FINALITY_CONFIRMATIONS deep, once', async () => {
    const txHash = await relayMined(t.app, alice.headers, newBody())
    const before = await caughtUp(t, alice)
    await t.app.relayMonitor.tick()
    expect((await caughtUp(t, alice, before.nextCursor)).events.map((e) => e.data.txHash)).not.toContain(txHash)
    await rpc(t.testChain.rpcUrl, 'evm_mine')
    await rpc(t.testChain.rpcUrl, 'evm_mine')
    await t.app.relayMonitor.tick()
    await t.app.relayMonitor.tick()
    const finalized = (await caughtUp(t, alice, before.nextCursor)).events.filter((e) => e.data.txHash === txHash)
    expect(finalized.map((e) => e.type)).toEqual(['anchor.finalized'])
    expect(finalized[0]!.data).toMatchObject(await onChain(t, txHash))
  })

  it('tell of an anchor whose transaction mined without its event, once', async () => {
    const db = t.database.handle.db
    const body = newBody()
    const txHash = await relayMined(t.app, bob.headers, body)
    const [anchor] = await query<{ id: string }>(db, sql`SELECT id FROM anchors WHERE tx_hash = ${txHash}`)
    const before = await caughtUp(t, bob)
    // As the monitor records a receipt without the event (a node that lost the contract): twice.
    const mined = { anchorId: anchor!.id, txHash, blockNumber: 1, blockHash: txHash, logIndex: null, confirmed: false }
    await markMined(db, [mined], t.chain.contractAddress)
    await markMined(db, [mined], t.chain.contractAddress)
    expect((await caughtUp(t, bob, before.nextCursor)).events.map((e) => [e.type, e.data.txHash])).toEqual([
      ['anchor.failed', txHash],
    ])
  })

  it('are read a page at a time in order, each account only its own, and a cursor not given is refused', async () => {
    const all = (await caughtUp(t, alice)).events
    expect(all.length).toBeGreaterThan(3)
    const pages: FeedEvent[] = []
    let cursor: string | undefined
    // An empty page before the end is the feed holding back behind a writer still running: asked again.
    for (let asked = 0; pages.length < all.length && asked < 300; asked++) {
      const next = await feed(t, alice, cursor, 2)
      if (next.events.length === 0) await new Promise((resolve) => setTimeout(resolve, 50))
      pages.push(...next.events)
      cursor = next.nextCursor
    }
    expect(pages).toEqual(all)
    const bobs = new Set((await caughtUp(t, bob)).events.map((e) => e.id))
    expect(all.filter((e) => bobs.has(e.id))).toEqual([])
    for (const bad of ['abc', '-1', '01', '1e3', '9'.repeat(19)]) {
      const response = await t.app.inject({ method: 'GET', url: `/api/events?after=${bad}`, headers: alice.headers })
      expect({ bad, status: response.statusCode }).toEqual({ bad, status: 400 })
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' })
    }
    const tooMany = await t.app.inject({ method: 'GET', url: '/api/events?limit=501', headers: alice.headers })
    expect(tooMany.statusCode).toBe(400)
  })
})

describe.runIf(testPostgresUrl !== undefined)('the event feed while writers are in the middle (PostgreSQL)', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
  })
  afterAll(async () => t?.close())

  it('never passes an event whose transaction is still open, however many commit after it', async () => {
    const user = await signInTestUser(t)
    const firstTx = await relayMined(t.app, user.headers, newBody())
    const secondTx = await relayMined(t.app, user.headers, newBody())
    const [first] = await query<{ id: string }>(
      t.database.handle.db,
      sql`SELECT id FROM anchors WHERE tx_hash = ${firstTx}`,
    )
    const [second] = await query<{ id: string }>(
      t.database.handle.db,
      sql`SELECT id FROM anchors WHERE tx_hash = ${secondTx}`,
    )
    const start = (await feed(t, user)).nextCursor
    const slow = new pg.Client({ connectionString: t.database.url! })
    await slow.connect()
    try {
      // The slow writer takes its event's place first, and commits last.
      await slow.query('BEGIN')
      await slow.query(`SELECT anchor_event($1, 'anchor.finalized', '0x00', NULL)`, [first!.id])
      await t.database.handle.db.execute(sql`SELECT anchor_event(${second!.id}, 'anchor.finalized', '0x00', NULL)`)
      expect((await feed(t, user, start)).events).toEqual([])
      await slow.query('COMMIT')
      // Writers anywhere in the cluster hold the feed back while they run (other test files' among them): briefly.
      await expect
        .poll(async () => (await feed(t, user, start)).events.map((e) => e.data.txHash), { timeout: 15_000 })
        .toEqual([firstTx, secondTx])
    } finally {
      await slow.end()
    }
  })
})
