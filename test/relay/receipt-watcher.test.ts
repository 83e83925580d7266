// The receipt watcher against a real anvil, through a proxy that can slow the node's answers down.
import { type Hex, keccak256, numberToHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { ReceiptWatcher } from '../../src/relayer/receipt-watcher.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
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
    watcher = new ReceiptWatcher(client, POLLING_MS, [chain.account(0).address])
  })
  afterAll(async () => {
    watcher?.stop()
    await proxy?.close()
    await chain?.stop()
  })

  /** A signed transfer (from the watcher's sender, account 0, unless told) and its hash, not yet sent. */
  async function signedTransfer(from = 0): Promise<{ raw: Hex; hash: Hex }> {
    const wallet = chain.walletClient(from)
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

  it("keeps the receipts of its own senders that a poll delivered before their wait, and no one else's", async () => {
    const own = await signedTransfer(0)
    const stranger = await signedTransfer(2)
    // A waiter keeps the polls running, block by block, while both transactions are mined (one block each).
    proxy.reset()
    const polling = watcher.wait(randomHash(), 3_000)
    const calls = () => proxy.requests.flat()
    // A second poll has begun: the first has set the block the polls go on from.
    await expect.poll(() => calls().filter((call) => call.method === 'eth_blockNumber').length).toBeGreaterThan(1)
    await rpc(chain.rpcUrl, 'eth_sendRawTransaction', [own.raw])
    await rpc(chain.rpcUrl, 'eth_sendRawTransaction', [stranger.raw])
    const ownBlock = numberToHex((await chain.publicClient.waitForTransactionReceipt({ hash: own.hash })).blockNumber)
    // Delivered: a poll asked for the own transaction's block, and a later poll has begun.
    await expect
      .poll(() => {
        const seen = calls()
        const asked = seen.findIndex((call) => call.method === 'eth_getBlockReceipts' && call.params[0] === ownBlock)
        return asked >= 0 && seen.slice(asked).some((call) => call.method === 'eth_blockNumber')
      })
      .toBe(true)
    const asked = new Set<string>()
    proxy.intercept = (calls) => {
      for (const call of calls) if (call.method === 'eth_getTransactionReceipt') asked.add(String(call.params[0]))
      return undefined
    }
    try {
      expect((await watcher.wait(own.hash, 1_000))?.transactionHash).toBe(own.hash)
      expect((await watcher.wait(stranger.hash, 1_000))?.transactionHash).toBe(stranger.hash)
      // The own receipt answered from what the poll delivered; the stranger's asked the node again.
      expect([...asked]).toEqual([stranger.hash])
    } finally {
      proxy.intercept = undefined
    }
    expect(await polling).toBeNull()
  })
})
