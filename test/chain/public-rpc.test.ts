// The embedded chain's published RPC is read-only (issue 38, item 7): `/api/info` names the service's own `/rpc`, never
// anvil's port; reads go through (viem reads an anchor's receipt and log there), and what a local user did through
// anvil's port (eth_sendTransaction from the unlocked relayer, anvil_impersonateAccount, a raw transaction signed with
// the public development key, mining) is answered "not available" and changes nothing.
import { createPublicClient, createWalletClient, http, parseEther } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/soak/free-port.ts'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { randomHash } from '../relay/relay-helpers.ts'

describe('the embedded chain’s public RPC', () => {
  let t: TestApp
  let url: string
  let rpc: string

  beforeAll(async () => {
    // The route is named by the public URL: where the service listens.
    const port = await freePort()
    t = await createTestApp({
      env: { PUBLIC_URL: `http://127.0.0.1:${port}` },
      chainContext: (testChain) => ({ publicRpcUrl: null, embeddedRpcUrl: testChain.rpcUrl }),
    })
    url = await t.app.listen({ host: '127.0.0.1', port })
    const info = (await (await fetch(`${url}/api/info`)).json()) as { publicRpcUrl: string }
    rpc = info.publicRpcUrl
  })
  afterAll(async () => t?.close())

  const call = async (body: unknown) =>
    (await fetch(rpc, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    }).then((response) => response.json())) as
      | { id: unknown; result?: unknown; error?: { code: number; message: string } }
      | { id: unknown; result?: unknown; error?: { code: number; message: string } }[]

  it('is the service’s own /rpc, and reads an anchor as viem does', async () => {
    expect(rpc).toBe(`${t.config.publicUrl}/rpc`)
    // An anchor written by the relayer, as the service does, on the chain itself.
    const relayer = t.testChain.account(0)
    const wallet = createWalletClient({ account: relayer, transport: http(t.testChain.rpcUrl) })
    const hash = await wallet.writeContract({
      chain: null,
      address: t.testChain.contract,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [randomHash(), `0x${'00'.repeat(32)}`],
    })
    const reader = createPublicClient({ transport: http(rpc) })
    const receipt = await reader.waitForTransactionReceipt({ hash, pollingInterval: 20 })
    expect(receipt.logs[0]?.address.toLowerCase()).toBe(t.testChain.contract.toLowerCase())
    expect(await reader.getChainId()).toBe(t.testChain.chain.id)
  })

  it('answers every write and anvil method "not available", and the chain does not change', async () => {
    const reader = createPublicClient({ transport: http(t.testChain.rpcUrl) })
    const relayer = t.testChain.account(0).address
    const before = {
      block: await reader.getBlockNumber(),
      nonce: await reader.getTransactionCount({ address: relayer }),
    }
    const attempts = [
      { method: 'eth_sendTransaction', params: [{ from: relayer, to: relayer, value: '0x1' }] },
      { method: 'anvil_impersonateAccount', params: [relayer] },
      { method: 'anvil_setBalance', params: [relayer, `0x${parseEther('1000').toString(16)}`] },
      { method: 'eth_sendRawTransaction', params: ['0x02f8'] },
      { method: 'evm_mine', params: [] },
      { method: 'anvil_setCode', params: [t.testChain.contract, '0x00'] },
      { method: 'debug_traceTransaction', params: [`0x${'11'.repeat(32)}`] },
    ]
    for (const [i, attempt] of attempts.entries()) {
      const answer = await call({ jsonrpc: '2.0', id: i, ...attempt })
      expect(answer).toEqual({
        jsonrpc: '2.0',
        id: i,
        error: { code: -32601, message: `${attempt.method} is not available: this endpoint only reads the chain` },
      })
    }
    // In a batch, the reads are answered and the rest refused, each under its own id.
    const batch = (await call([
      { jsonrpc: '2.0', id: 'a', method: 'eth_chainId' },
      { jsonrpc: '2.0', id: 'b', method: 'anvil_mine', params: [10] },
      { jsonrpc: '2.0', id: 'c', method: 'eth_blockNumber' },
    ])) as { id: string; result?: string; error?: { code: number } }[]
    expect(batch.map((answer) => [answer.id, answer.error?.code ?? 'ok'])).toEqual([
      ['a', 'ok'],
      ['b', -32601],
      ['c', 'ok'],
    ])
    expect(batch[0]!.result).toBe(`0x${t.testChain.chain.id.toString(16)}`)
    expect(await reader.getBlockNumber()).toBe(before.block)
    expect(await reader.getTransactionCount({ address: relayer })).toBe(before.nonce)
  })

  it('refuses what is no JSON-RPC request, and a batch of more than 20', async () => {
    const notRpc = await fetch(rpc, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ method: 'eth_chainId' }),
    })
    expect(notRpc.status).toBe(400)
    const tooMany = await fetch(rpc, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(Array.from({ length: 21 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'eth_chainId' }))),
    })
    expect(tooMany.status).toBe(400)
  })
})
