// The receipt watcher against a real anvil, through a proxy that can slow the node's answers down.
import { type Hex, keccak256 } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { ReceiptWatcher } from '../../src/relayer/receipt-watcher.ts'
import { startTestChain, type TestChain } from '../helpers/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/rpc-proxy.ts'
import { randomHash, rpc } from './relay-helpers.ts'

const POLLING_MS = 20

describe('ReceiptWatcher', () => {
  let chain: TestChain
  let proxy: RpcProxy
  let watcher: ReceiptWatcher

  beforeAll(async () => {
    chain = await startTestChain({ deploy: false })
    proxy = await startRpcProxy(chain.rpcUrl)
    const client = createChainClient({ rpcUrls: [proxy.url], chainId: chain.chain.id, pollingIntervalMs: POLLING_MS })
    watcher = new ReceiptWatcher(client, POLLING_MS)
  })
  afterAll(async () => {
    watcher?.stop()
    await proxy?.close()
    await chain?.stop()
  })

  /** A signed transfer and its hash, not yet sent. */
  async function signedTransfer(): Promise<{ raw: Hex; hash: Hex }> {
    const wallet = chain.walletClient(0)
    const request = await wallet.prepareTransactionRequest({ to: chain.account(1).address, value: 1n })
    const raw = await wallet.signTransaction(request)
    return { raw, hash: keccak256(raw) }
  }

  it('delivers a receipt mined while its first direct question was still out, behind a poll that did not ask', async () => {
    const transfer = await signedTransfer()
    // The waiter's first question reaches the node before the transaction does, and its "not yet" comes back late.
    proxy.intercept = (calls) =>
      calls.some((call) => call.method === 'eth_getTransactionReceipt' && call.params[0] === transfer.hash)
        ? { answerAfterMs: 400 }
        : undefined
    const waited = watcher.wait(transfer.hash, 3_000)
    await new Promise((resolve) => setTimeout(resolve, 50))
    proxy.intercept = undefined
    await rpc(chain.rpcUrl, 'eth_sendRawTransaction', [transfer.raw])
    // Another waiter starts the polling meanwhile; its first poll asks only for the waiters it knows of.
    const other = watcher.wait(randomHash(), 1_000)
    const receipt = await waited
    expect(receipt?.transactionHash).toBe(transfer.hash)
    expect(await other).toBeNull()
  })
})
