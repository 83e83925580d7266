// The relayer key used outside the service: its nonce taken by a transaction that is not ours. The relay (at send)
// or the monitor (once the other transaction is mined) moves the anchor onto a fresh nonce and still ends confirmed.
import { sql } from 'drizzle-orm'
import { type Hex, parseGwei } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, postRelay, query, relayMined, rpc } from './relay-helpers.ts'

describe('a relayer key used outside the service', () => {
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '1000', RELAY_FEE_CACHE_MS: '0' },
    })
    user = await signInTestUser(t)
    await relayMined(t.app, user.headers, newBody())
  })
  afterAll(async () => t?.close())

  const relayer = () => t.testChain.account(0)
  const nextNonce = async () =>
    Number((await query(t.database.handle.db, sql`SELECT next_nonce FROM relayer_nonces`))[0]?.next_nonce)
  const anchorOf = async (compositeHash: string) =>
    (
      await query<{ tx_hash: string; nonce: unknown; status: string }>(
        t.database.handle.db,
        sql`SELECT tx_hash, nonce, status FROM anchors WHERE composite_hash = ${compositeHash}`,
      )
    )[0]
  const transactionsOf = (compositeHash: string) =>
    query<{ tx_hash: string; status: string }>(
      t.database.handle.db,
      sql`SELECT r.tx_hash, r.status FROM relay_transactions r JOIN anchors a ON a.id = r.anchor_id
          WHERE a.composite_hash = ${compositeHash} ORDER BY r.created_at`,
    )
  /** A self-transfer from the relayer key, sent by someone else, with the nonce given. */
  const sendOutside = (nonce: number, tip = parseGwei('1')) =>
    t.testChain.walletClient(0).sendTransaction({
      to: relayer().address,
      value: 0n,
      nonce,
      maxPriorityFeePerGas: tip,
      maxFeePerGas: parseGwei('100'),
    })

  it('re-signs on a fresh nonce at once when the node says the nonce is used, and answers 201', async () => {
    const taken = await nextNonce()
    const outside = await sendOutside(taken)
    await t.testChain.publicClient.waitForTransactionReceipt({ hash: outside })

    const body = newBody()
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(201)
    const anchor = await anchorOf(body.compositeHash)
    expect(Number(anchor!.nonce)).toBe(taken + 1)
    expect(anchor!.tx_hash).toBe(response.json().txHash)
    const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: anchor!.tx_hash as Hex })
    expect(receipt.status).toBe('success')
    // The transaction signed first, on the taken nonce, is kept as failed; the node never took it.
    expect((await transactionsOf(body.compositeHash)).map((row) => row.status)).toEqual(['failed', 'mined'])
    expect(await nextNonce()).toBe(taken + 2)
  })

  it('moves a pending anchor whose nonce another transaction took in the pool onto a fresh one', async () => {
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const body = newBody()
      const first = await postRelay(t.app, user.headers, body)
      expect(first.statusCode).toBe(202)
      const pending = await anchorOf(body.compositeHash)
      const nonce = Number(pending!.nonce)
      // Same nonce, a far higher tip: it replaces ours in the pool and is mined instead.
      await sendOutside(nonce, parseGwei('50'))
      await rpc(t.testChain.rpcUrl, 'evm_mine')
      await expect(t.testChain.publicClient.getTransactionReceipt({ hash: pending!.tx_hash as Hex })).rejects.toThrow()

      // The first pass finds the nonce used by a transaction the database does not hold and looks on chain first (it
      // could be a forgotten one of this anchor's, src/relayer/actions/reconcile.ts); the second moves the anchor.
      await t.app.relayMonitor.tick()
      expect(await anchorOf(body.compositeHash)).toMatchObject({ tx_hash: pending!.tx_hash })
      await t.app.relayMonitor.tick()
      const moved = await anchorOf(body.compositeHash)
      expect(Number(moved!.nonce)).toBe(nonce + 1)
      expect(moved!.tx_hash).not.toBe(pending!.tx_hash)
      await rpc(t.testChain.rpcUrl, 'evm_mine')
      await t.app.relayMonitor.tick()
      expect(await anchorOf(body.compositeHash)).toMatchObject({ status: 'confirmed', tx_hash: moved!.tx_hash })
      expect(await transactionsOf(body.compositeHash)).toEqual([
        { tx_hash: pending!.tx_hash, status: 'failed' },
        { tx_hash: moved!.tx_hash, status: 'mined' },
      ])
      // The client's retry learns the final hash.
      const retry = await postRelay(t.app, user.headers, body)
      expect(retry.statusCode).toBe(200)
      expect(retry.json()).toMatchObject({ txHash: moved!.tx_hash, status: 'confirmed' })
    } finally {
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
    }
  })
})
