import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, poolMined, postRelay, query, rpc } from './relay-helpers.ts'

const STUCK_MS = 300

async function transactionsOf(t: TestApp, compositeHash: string) {
  return query<{ tx_hash: string; nonce: unknown; status: string; max_fee_per_gas: string; broadcast_at: unknown }>(
    t.database.handle.db,
    sql`SELECT r.tx_hash, r.nonce, r.status, r.max_fee_per_gas, r.broadcast_at FROM relay_transactions r
        JOIN anchors a ON a.id = r.anchor_id WHERE a.composite_hash = ${compositeHash} ORDER BY r.created_at`,
  )
}

async function anchorOf(t: TestApp, user: SignedInUser, compositeHash: string) {
  return (await t.app.inject({ method: 'GET', url: `/api/anchors/${compositeHash}`, headers: user.headers })).json()
}

describe('relay monitor with mining off', () => {
  let t: TestApp
  let user: SignedInUser
  const mine = () => rpc(t.testChain.rpcUrl, 'evm_mine')

  beforeAll(async () => {
    t = await createTestApp({
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        RELAY_WAIT_MS: '150',
        RELAY_STUCK_AFTER_MS: String(STUCK_MS),
        RELAY_FEE_CACHE_MS: '0',
      },
    })
    user = await signInTestUser(t)
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
  })
  afterAll(async () => t?.close())

  it('answers 202 pending, then re-sends a transaction the node dropped and confirms it under the same hash', async () => {
    const body = newBody()
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(202)
    expect(response.json()).toMatchObject({ status: 'pending', blockNumber: null })
    const { txHash } = response.json()
    await rpc(t.testChain.rpcUrl, 'anvil_dropTransaction', [txHash])
    expect(await t.testChain.publicClient.getTransaction({ hash: txHash }).catch(() => null)).toBeNull()

    await t.app.relayMonitor.tick()
    expect(await t.testChain.publicClient.getTransaction({ hash: txHash })).toMatchObject({ hash: txHash })
    await mine()
    await t.app.relayMonitor.tick()
    expect(await anchorOf(t, user, body.compositeHash)).toMatchObject({ txHash, status: 'confirmed' })
    const again = await postRelay(t.app, user.headers, body)
    expect(again.statusCode).toBe(200)
    expect(again.json().txHash).toBe(txHash)
  })

  it('replaces an underpriced transaction under the same nonce with a bumped fee and confirms the replacement', async () => {
    const body = newBody()
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(202)
    const first = response.json().txHash as Hex
    const [original] = await transactionsOf(t, body.compositeHash)
    // The next block's base fee jumps far above what the transaction pays: it cannot be mined.
    await rpc(t.testChain.rpcUrl, 'anvil_setNextBlockBaseFeePerGas', [
      `0x${(BigInt(original!.max_fee_per_gas) * 20n).toString(16)}`,
    ])
    await mine()
    expect(await t.testChain.publicClient.getTransactionReceipt({ hash: first }).catch(() => null)).toBeNull()

    await new Promise((resolve) => setTimeout(resolve, STUCK_MS + 50))
    await t.app.relayMonitor.tick()
    const txs = await transactionsOf(t, body.compositeHash)
    expect(txs).toHaveLength(2)
    // Recorded as broadcast, with its time, before it went out.
    expect(txs[1]).toMatchObject({ status: 'broadcast', broadcast_at: expect.anything() })
    expect(Number(txs[1]!.nonce)).toBe(Number(txs[0]!.nonce))
    expect(BigInt(txs[1]!.max_fee_per_gas)).toBeGreaterThanOrEqual((BigInt(original!.max_fee_per_gas) * 110n) / 100n)
    const provisional = await anchorOf(t, user, body.compositeHash)
    expect(provisional).toMatchObject({ status: 'pending', txHash: txs[1]!.tx_hash })

    await mine()
    await t.app.relayMonitor.tick()
    const final = await anchorOf(t, user, body.compositeHash)
    expect(final).toMatchObject({ status: 'confirmed', txHash: txs[1]!.tx_hash })
    const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: txs[1]!.tx_hash as Hex })
    expect(Number(receipt.blockNumber)).toBe(final.blockNumber)
    expect((await transactionsOf(t, body.compositeHash)).map((r) => r.status)).toEqual(['replaced', 'mined'])
    const retry = await postRelay(t.app, user.headers, body)
    expect(retry.statusCode).toBe(200)
    expect(retry.json().txHash).toBe(txs[1]!.tx_hash)
  })

  it('adopts the earlier hash of a nonce when that one is mined instead of its replacement', async () => {
    const body = newBody()
    const first = (await postRelay(t.app, user.headers, body)).json().txHash as Hex
    const [original] = await query<{ raw_transaction: Hex }>(
      t.database.handle.db,
      sql`SELECT raw_transaction FROM relay_transactions WHERE tx_hash = ${first}`,
    )
    await new Promise((resolve) => setTimeout(resolve, STUCK_MS + 50))
    await t.app.relayMonitor.tick()
    const txs = await transactionsOf(t, body.compositeHash)
    expect(txs).toHaveLength(2)
    // The node loses the replacement and gets the original back (another node's pool, say), which is then mined.
    await rpc(t.testChain.rpcUrl, 'anvil_dropTransaction', [txs[1]!.tx_hash])
    await rpc(t.testChain.rpcUrl, 'eth_sendRawTransaction', [original!.raw_transaction]).catch((error: Error) => {
      // anvil may still hold it: what matters is that the original is what gets mined.
      if (!/already/.test(error.message)) throw error
    })
    await mine()
    await t.app.relayMonitor.tick()
    expect(await anchorOf(t, user, body.compositeHash)).toMatchObject({ status: 'confirmed', txHash: first })
    expect((await transactionsOf(t, body.compositeHash)).map((r) => r.status)).toEqual(['mined', 'replaced'])
  })
})

describe('relay monitor after a reorg', () => {
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('re-sends the same signed transaction, so the confirmed hash never changes', async () => {
    await postRelay(t.app, user.headers, newBody())
    const body = newBody()
    const relayed = await postRelay(t.app, user.headers, body)
    expect(relayed.statusCode).toBe(201)
    const { txHash } = relayed.json()
    // Its block replaced by an empty one at the same height: the canonical chain no longer holds it.
    await rpc(t.testChain.rpcUrl, 'anvil_reorg', [1, []])
    expect(await t.testChain.publicClient.getTransactionReceipt({ hash: txHash }).catch(() => null)).toBeNull()

    await t.app.relayMonitor.tick() // notices the anchor's block lost it
    await t.app.relayMonitor.tick() // re-sends the very same raw transaction
    await poolMined(t.testChain)
    await t.app.relayMonitor.tick() // records where it was mined again
    const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: txHash })
    expect(receipt.status).toBe('success')
    expect(await anchorOf(t, user, body.compositeHash)).toMatchObject({
      txHash,
      status: 'confirmed',
      blockNumber: Number(receipt.blockNumber),
    })
  })
})
