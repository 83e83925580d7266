// A broadcast whose outcome cannot be known (the node timed out, or took the transaction and the connection dropped
// before its answer): the relay keeps the signed transaction, waits for its receipt within the window (201 when it
// comes, else 202 pending with its hash), burns no nonce and withdraws nothing; the monitor or the client's retry
// finishes it under that same hash, sent once.
import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcCall, type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { anchorNonces, count, expectContiguous, newBody, postRelay, query } from './relay-helpers.ts'

const SEND_TIMEOUT_MS = 500
const isSend = (calls: RpcCall[]) => calls.some((call) => call.method === 'eth_sendRawTransaction')

describe('POST /api/relay when the outcome of the broadcast is unknown', () => {
  let chain: TestChain
  let proxy: RpcProxy
  let t: TestApp
  let user: SignedInUser
  /** The relayer's first nonce for anchors (it deployed the contract). */
  let firstNonce: number

  beforeAll(async () => {
    chain = await startTestChain()
    firstNonce = await chain.publicClient.getTransactionCount({ address: chain.account(0).address })
    proxy = await startRpcProxy(chain.rpcUrl)
    t = await createTestApp({
      testChain: chain,
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '2000' },
      // The app talks to the chain through the proxy only, with a short timeout so that a hung send ends quickly.
      chainContext: () => ({
        client: createChainClient({
          rpcUrls: [proxy.url],
          chainId: chain.chain.id,
          pollingIntervalMs: 20,
          timeoutMs: SEND_TIMEOUT_MS,
        }),
      }),
    })
    user = await signInTestUser(t)
  })
  afterAll(async () => {
    await t?.close()
    await proxy?.close()
    await chain?.stop()
  })

  async function transactionsOf(compositeHash: string) {
    return query<{ tx_hash: string; status: string }>(
      t.database.handle.db,
      sql`SELECT r.tx_hash, r.status FROM relay_transactions r JOIN anchors a ON a.id = r.anchor_id
          WHERE a.composite_hash = ${compositeHash}`,
    )
  }

  /** Every anchor holds its own nonce, gap-free, and the chain has sent exactly as many transactions. */
  async function expectOneTransactionPerAnchor(): Promise<void> {
    const nonces = await anchorNonces(t.database.handle.db)
    expect(expectContiguous(nonces, firstNonce)).toBe(true)
    const sent = await chain.publicClient.getTransactionCount({ address: chain.account(0).address })
    expect(sent).toBe(firstNonce + nonces.length)
  }

  it('answers 202 when the node never answered, and the monitor sends that very transaction', async () => {
    proxy.intercept = (calls) => (isSend(calls) ? 'hang' : undefined)
    const body = newBody()
    const started = performance.now()
    const first = await postRelay(t.app, user.headers, body)
    proxy.intercept = undefined
    expect(first.statusCode).toBe(202)
    expect(first.json()).toMatchObject({ status: 'pending', blockNumber: null, compositeHash: body.compositeHash })
    // It gave up on the node's timeout, not on the relay's wait for a receipt.
    expect(performance.now() - started).toBeLessThan(2_000 + 4 * SEND_TIMEOUT_MS)
    const txHash = first.json().txHash as Hex
    expect(await transactionsOf(body.compositeHash)).toEqual([{ tx_hash: txHash, status: 'signed' }])
    await expect(chain.publicClient.getTransaction({ hash: txHash })).rejects.toThrow()

    // Nothing was withdrawn: the anchor counts against the quota and keeps its nonce.
    const [usage] = await query<{ used: unknown }>(
      t.database.handle.db,
      sql`SELECT coalesce(sum(used), 0) AS used FROM anchor_usage`,
    )
    expect(Number(usage!.used)).toBe(await count(t.database.handle.db, 'anchors'))
    await t.app.relayMonitor.tick()
    expect((await chain.publicClient.waitForTransactionReceipt({ hash: txHash })).status).toBe('success')
    await t.app.relayMonitor.tick()

    const retry = await postRelay(t.app, user.headers, body)
    expect(retry.statusCode).toBe(200)
    expect(retry.json()).toMatchObject({ txHash, status: 'confirmed' })
    expect(await transactionsOf(body.compositeHash)).toEqual([{ tx_hash: txHash, status: 'mined' }])
    await expectOneTransactionPerAnchor()
  })

  it('waits for the receipt when the connection dropped after the node took it, and answers 201', async () => {
    proxy.intercept = (calls) => (isSend(calls) ? 'drop-after-forward' : undefined)
    const body = newBody()
    const first = await postRelay(t.app, user.headers, body)
    proxy.intercept = undefined
    // The outcome was unknown, so nothing was withdrawn; the node did get it, and its receipt came within the window.
    expect(first.statusCode).toBe(201)
    const txHash = first.json().txHash as Hex
    expect((await chain.publicClient.getTransactionReceipt({ hash: txHash })).status).toBe('success')

    const retry = await postRelay(t.app, user.headers, body)
    expect(retry.statusCode).toBe(200)
    expect(retry.json()).toMatchObject({ txHash, status: 'confirmed' })
    await t.app.relayMonitor.tick()
    expect(await transactionsOf(body.compositeHash)).toEqual([{ tx_hash: txHash, status: 'mined' }])

    // The next relay takes the next nonce: nothing was burned or handed out twice.
    expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    await expectOneTransactionPerAnchor()
  })
})
