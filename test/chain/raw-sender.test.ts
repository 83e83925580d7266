// The one way signed transactions are sent: once per URL, never retried by the transport, and every answer that does
// not come from the node itself (a dropped or refused connection, a gateway's status, a timeout) reported as unclear.
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createRawSender } from '../../src/chain/raw-sender.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'

const TIMEOUT_MS = 400

describe('createRawSender', () => {
  let chain: TestChain
  let proxy: RpcProxy

  beforeAll(async () => {
    chain = await startTestChain({ deploy: false })
    proxy = await startRpcProxy(chain.rpcUrl)
  })
  afterAll(async () => {
    await proxy?.close()
    await chain?.stop()
  })

  const minedCount = () => chain.publicClient.getTransactionCount({ address: chain.account(1).address })
  const takenCount = () =>
    chain.publicClient.getTransactionCount({ address: chain.account(1).address, blockTag: 'pending' })
  /**
   * A fresh self-transfer of account 1 at the node's next nonce. Counted from the pending state: anvil answers a send
   * before its automine has made the block, so the latest block may not hold the transaction just taken.
   */
  async function signed(ahead = 0): Promise<Hex> {
    const account = chain.account(1)
    const next = await takenCount()
    return account.signTransaction({
      chainId: chain.chain.id,
      to: account.address,
      nonce: next + ahead,
      gas: 21_000n,
      maxFeePerGas: 10_000_000_000n,
      maxPriorityFeePerGas: 1_000_000_000n,
    })
  }
  const send = async (urls: string[], raw: Hex) =>
    (await createRawSender({ rpcUrls: urls, timeoutMs: TIMEOUT_MS })([raw]))[0]!
  const sends = () => proxy.requests.filter((calls) => calls.some((c) => c.method === 'eth_sendRawTransaction'))

  it('reports the node taking it, and the node refusing it in its own words', async () => {
    const before = await takenCount()
    const raw = await signed()
    expect(await send([proxy.url], raw)).toEqual({ answer: { kind: 'accepted' }, unclearBefore: false })
    // Once mined (anvil answers before its automine has made the block), its words for a nonce already used.
    await expect.poll(minedCount).toBe(before + 1)
    expect(await send([proxy.url], raw)).toEqual({
      answer: { kind: 'refused', code: -32003, message: 'nonce too low' },
      unclearBefore: false,
    })
  })

  it('sends once: a dropped answer is unclear, and the transport does not send it again', async () => {
    proxy.reset()
    proxy.intercept = () => 'drop-after-forward'
    const before = await takenCount()
    const { answer } = await send([proxy.url], await signed())
    proxy.intercept = undefined
    expect(answer).toMatchObject({ kind: 'unclear' })
    expect(sends()).toHaveLength(1)
    // The node did get it.
    await expect.poll(minedCount).toBe(before + 1)
  })

  it('reports a gateway status, a timeout, refused connections and a provider refusing connections as unclear', async () => {
    const cases: [string, () => void][] = [
      ['HTTP 429', () => (proxy.intercept = () => ({ status: 429, retryAfterSeconds: 1 }))],
      ['HTTP 503', () => (proxy.intercept = () => ({ status: 503, retryAfterSeconds: 1 }))],
      ['within the timeout', () => (proxy.intercept = () => ({ answerAfterMs: TIMEOUT_MS * 2 }))],
      ['', () => (proxy.intercept = () => ({ refuseConnectionsMs: 300 }))],
    ]
    for (const [words, intercept] of cases) {
      proxy.reset()
      intercept()
      const { answer } = await send([proxy.url], await signed())
      proxy.intercept = undefined
      expect(answer).toMatchObject({ kind: 'unclear' })
      expect((answer as { reason: string }).reason).toContain(words)
      expect(sends()).toHaveLength(1)
      await new Promise((resolve) => setTimeout(resolve, 350))
    }
    const refused = await send([`http://127.0.0.1:${await closedPort()}`], await signed())
    expect(refused.answer).toMatchObject({ kind: 'unclear', reason: expect.stringContaining('ECONNREFUSED') })
  })

  it('tries the next URL after an unclear answer, and says a later refusal followed one', async () => {
    const down = `http://127.0.0.1:${await closedPort()}/v3/0123456789abcdef0123456789abcdef01234567`
    const before = await takenCount()
    const raw = await signed()
    expect(await send([down, chain.rpcUrl], raw)).toEqual({ answer: { kind: 'accepted' }, unclearBefore: true })
    await expect.poll(minedCount).toBe(before + 1)
    expect(await send([down, chain.rpcUrl], raw)).toMatchObject({
      answer: { kind: 'refused', message: 'nonce too low' },
      unclearBefore: true,
    })
    // No URL answered: the reason carries neither the URL nor its key.
    const { answer } = await send([down], raw)
    expect(JSON.stringify(answer)).not.toContain('0123456789abcdef')
  })

  it('reports a provider answering in its own words as refused, for the relayer to read', async () => {
    proxy.intercept = () => ({
      rpcError: { code: -32005, message: 'daily request count exceeded, request rate limited' },
    })
    const { answer } = await send([proxy.url], await signed())
    proxy.intercept = undefined
    expect(answer).toEqual({
      kind: 'refused',
      code: -32005,
      message: 'daily request count exceeded, request rate limited',
    })
  })

  it('sends several as one batch, in order, each with its own answer', async () => {
    proxy.reset()
    const raws = [await signed(0), await signed(1), await signed(2)]
    const sender = createRawSender({ rpcUrls: [proxy.url], timeoutMs: TIMEOUT_MS })
    const before = await takenCount()
    expect(await sender(raws)).toEqual(raws.map(() => ({ answer: { kind: 'accepted' }, unclearBefore: false })))
    expect(proxy.requests).toHaveLength(1)
    await expect.poll(minedCount).toBe(before + 3)
    // Answered one by one: the second again (mined: nonce too low) beside a fresh one.
    const results = await sender([raws[1]!, await signed(0)])
    expect(results.map((r) => r.answer.kind)).toEqual(['refused', 'accepted'])
  })

  it('sends one call per request to an endpoint that takes no batches', async () => {
    proxy.reset()
    proxy.intercept = (calls) => (calls.length > 1 ? { status: 400 } : undefined)
    const sender = createRawSender({ rpcUrls: [proxy.url], timeoutMs: TIMEOUT_MS })
    const raws = [await signed(0), await signed(1)]
    expect((await sender(raws)).map((r) => r.answer.kind)).toEqual(['accepted', 'accepted'])
    const more = [await signed(0), await signed(1)]
    expect((await sender(more)).map((r) => r.answer.kind)).toEqual(['accepted', 'accepted'])
    proxy.intercept = undefined
    // The refused batch, then one request per call; the second time no batch is tried.
    expect(proxy.requests.map((calls) => calls.length)).toEqual([2, 1, 1, 1, 1])
  })
})
