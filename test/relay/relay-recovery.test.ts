import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/database.ts'
import { quotaPeriod } from '../../src/db/schema.ts'
import { RelayMonitor } from '../../src/relayer/monitor.ts'
import { type NewAnchor, reserveAnchors, withdrawAnchor } from '../../src/relayer/outbox/reservations.ts'
import type { Slot } from '../../src/relayer/outbox/slot.ts'
import { slotOf } from '../../src/relayer/relay-context.ts'
import { RelayerPool } from '../../src/relayer/relayer-pool.ts'
import { signFiller } from '../../src/relayer/signing.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'
import { newBody, postRelay, query, randomHash, relayMined, rpc } from './relay-helpers.ts'

const QUOTA = { plans: { free: 1_000 }, defaultPlan: 'free' }
const { period } = quotaPeriod()

/** One reservation, as a relay request that then dies would leave it. */
async function reserveOne(db: Database, slot: Slot, anchor: Omit<NewAnchor, 'period'>) {
  const [reserved] = await reserveAnchors(db, slot, [{ ...anchor, period }], QUOTA)
  if (reserved?.kind !== 'reserved') throw new Error('expected a reservation')
  return reserved
}

async function statusOf(t: TestApp, compositeHash: string): Promise<string | undefined> {
  const [row] = await query<{ status: string }>(
    t.database.handle.db,
    sql`SELECT status FROM anchors WHERE composite_hash = ${compositeHash}`,
  )
  return row?.status
}

async function chainNonce(t: TestApp): Promise<number> {
  return t.testChain.publicClient.getTransactionCount({ address: t.testChain.account(0).address })
}

describe('relay monitor recovery', () => {
  let t: TestApp
  let user: SignedInUser
  const slot = () => slotOf(t.app.relayer, t.testChain.account(0).address)

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '300' } })
    user = await signInTestUser(t)
    await relayMined(t.app, user.headers, newBody())
  })
  afterAll(async () => t?.close())

  it('signs and sends an anchor whose request died between reserving its nonce and signing', async () => {
    const db = t.database.handle.db
    const compositeHash = randomHash()
    const reserved = await reserveOne(db, slot(), {
      compositeHash,
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: newBody().encryptedPayload,
      userId: user.id,
    })
    // The next relay's nonce lies beyond the hole: the node holds it back, so it answers 202.
    const behind = newBody()
    expect((await postRelay(t.app, user.headers, behind)).statusCode).toBe(202)
    await db.execute(sql`UPDATE anchors SET created_at = now() - interval '1 minute' WHERE id = ${reserved.anchorId}`)

    await t.app.relayMonitor.tick()
    await expect.poll(() => chainNonce(t)).toBe(reserved.nonce + 2)
    await t.app.relayMonitor.tick()
    expect(await statusOf(t, compositeHash)).toBe('confirmed')
    expect(await statusOf(t, behind.compositeHash)).toBe('confirmed')
  })

  it('sends a filler for a nonce withdrawn below a live transaction, so the one above it is mined', async () => {
    const db = t.database.handle.db
    const account = t.testChain.account(0)
    const reserved = await reserveOne(db, slot(), {
      compositeHash: randomHash(),
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: newBody().encryptedPayload,
      userId: user.id,
    })
    const behind = newBody()
    expect((await postRelay(t.app, user.headers, behind)).statusCode).toBe(202)
    const fees = await t.app.relayer.fees.current()
    // Its send failed for certain: the anchor goes, and a filler keeps the nonce since a later one is out.
    const withdrawn = await withdrawAnchor(
      db,
      slot(),
      { anchorId: reserved.anchorId, userId: user.id, period, nonce: reserved.nonce },
      (nonce) => signFiller(account, t.chain.chainId, nonce, fees),
    )
    expect(withdrawn).toBe(true)
    const [filler] = await query<{ tx_hash: `0x${string}` }>(
      db,
      sql`SELECT tx_hash FROM relay_transactions WHERE anchor_id IS NULL AND nonce = ${reserved.nonce}`,
    )
    expect(filler).toBeDefined()
    await db.execute(
      sql`UPDATE relay_transactions SET created_at = now() - interval '1 minute' WHERE anchor_id IS NULL`,
    )

    await t.app.relayMonitor.tick()
    const receipt = await t.testChain.publicClient.waitForTransactionReceipt({ hash: filler!.tx_hash })
    expect(receipt.to?.toLowerCase()).toBe(account.address.toLowerCase())
    await expect.poll(() => chainNonce(t)).toBe(reserved.nonce + 2)
    await t.app.relayMonitor.tick()
    expect(await statusOf(t, behind.compositeHash)).toBe('confirmed')
    const [row] = await query<{ status: string }>(
      db,
      sql`SELECT status FROM relay_transactions WHERE tx_hash = ${filler!.tx_hash}`,
    )
    expect(row?.status).toBe('mined')
  })

  it('fills nonces handed out without a transaction at resync, and hands them to the next relays', async () => {
    const db = t.database.handle.db
    const start = await chainNonce(t)
    // As if the database had handed out two nonces whose records were lost (a restore from backup, say).
    await db.execute(sql`UPDATE relayer_nonces SET next_nonce = next_nonce + 2`)
    const fresh = new RelayMonitor(t.app.relayer, { intervalMs: 0 })
    await fresh.tick()
    const fillers = await query(
      db,
      sql`SELECT nonce FROM relay_transactions WHERE anchor_id IS NULL AND status = 'signed'`,
    )
    expect(fillers.map((r) => Number(r.nonce)).sort()).toEqual([start, start + 1])
    for (let i = 0; i < 3; i++) await relayMined(t.app, user.headers, newBody())
    expect(await chainNonce(t)).toBe(start + 3)
    expect(
      await query(db, sql`SELECT 1 FROM relay_transactions WHERE anchor_id IS NULL AND status = 'signed'`),
    ).toEqual([])
  })

  it('takes no work on a relayer below the minimum balance, alerts once, and spreads work over the others', async () => {
    const { logger, lines } = captureLogs('info')
    const balances = new Map<string, number>()
    const unfunded = privateKeyToAccount(generatePrivateKey())
    const pool = new RelayerPool(
      [t.testChain.account(0), unfunded, t.testChain.account(1)],
      t.chain.client,
      10n ** 18n,
      logger,
      (address, ether) => balances.set(address, ether),
    )
    await pool.refreshBalances()
    await pool.refreshBalances()
    const picked = Array.from({ length: 4 }, () => pool.acquire()!.address)
    expect(picked).not.toContain(unfunded.address.toLowerCase())
    expect(new Set(picked).size).toBe(2)
    expect(balances.get(unfunded.address.toLowerCase())).toBe(0)
    expect(lines.filter((line) => line.includes('ALERT relayer balance below the minimum'))).toHaveLength(1)
  })
})

describe('relay monitor at the fee cap', () => {
  let t: TestApp
  let lines: string[]

  beforeAll(async () => {
    const captured = captureLogs('info')
    lines = captured.lines
    t = await createTestApp({
      logger: captured.logger,
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        RELAY_WAIT_MS: '100',
        RELAY_STUCK_AFTER_MS: '100',
        RELAY_FEE_CACHE_MS: '0',
        RELAY_MAX_FEE_PER_GAS_GWEI: '2',
      },
    })
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
  })
  afterAll(async () => t?.close())

  it('keeps re-sending at the cap and alerts instead of bumping past it', async () => {
    const user = await signInTestUser(t)
    const body = newBody()
    expect((await postRelay(t.app, user.headers, body)).statusCode).toBe(202)
    const [tx] = await query<{ max_fee_per_gas: string }>(
      t.database.handle.db,
      sql`SELECT max_fee_per_gas FROM relay_transactions`,
    )
    expect(BigInt(tx!.max_fee_per_gas)).toBe(2_000_000_000n)
    await rpc(t.testChain.rpcUrl, 'anvil_setNextBlockBaseFeePerGas', ['0x2540be400']) // 10 gwei
    await rpc(t.testChain.rpcUrl, 'evm_mine')
    await new Promise((resolve) => setTimeout(resolve, 150))
    await t.app.relayMonitor.tick()
    await t.app.relayMonitor.tick()
    const txs = await query(t.database.handle.db, sql`SELECT tx_hash FROM relay_transactions`)
    expect(txs).toHaveLength(1)
    expect(lines.filter((line) => line.includes('ALERT transaction stuck at the fee cap'))).toHaveLength(1)
    expect(await statusOf(t, body.compositeHash)).toBe('pending')
  })
})
