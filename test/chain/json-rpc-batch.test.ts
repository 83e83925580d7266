// The verify reader's own batch: results put back in the order of the calls whatever order the node answers in, and
// any answer that does not account for exactly the calls sent is refused (the next RPC URL is tried), so a receipt
// can never be paired with the wrong transaction. A small HTTP server plays the node's answers.
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createJsonRpcBatch } from '../../src/chain/json-rpc-batch.ts'
import { closedPort } from '../helpers/processes/closed-port.ts'

type Answer = (calls: { id: number; method: string }[]) => unknown
/** An answer sent as it is, not as JSON. */
class Raw {
  constructor(
    readonly status: number,
    readonly text: string,
  ) {}
}
/** No answer at all: the batch's timeout ends the wait. */
const HANG = Symbol('hang')
/** The start of an answer, then the connection dropped, or held open with nothing more. */
const CUT = Symbol('cut')
const STALL = Symbol('stall')

describe('JSON-RPC batch', () => {
  let server: Server
  let url: string
  let answer: Answer
  let requests = 0

  beforeAll(async () => {
    server = createServer(async (request, response) => {
      const chunks: Buffer[] = []
      for await (const chunk of request) chunks.push(chunk as Buffer)
      requests += 1
      const body = answer(JSON.parse(Buffer.concat(chunks).toString('utf8')))
      if (body === HANG) return
      if (body === CUT || body === STALL) {
        response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100' })
        response.write('[{"jsonrpc":"2.0","id":0,')
        if (body === CUT) setTimeout(() => response.socket?.destroy(), 20)
        return
      }
      if (body instanceof Raw) response.writeHead(body.status).end(body.text)
      else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body))
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  )

  const calls = [
    { method: 'eth_blockNumber', params: [] },
    { method: 'eth_getTransactionReceipt', params: ['0x01'] },
    { method: 'eth_getTransactionReceipt', params: ['0x02'] },
  ]
  const resultOf = (call: { id: number; method: string }) => `${call.method}#${call.id}`

  it('returns the results in the order of the calls when the node answers out of order', async () => {
    answer = (sent) => sent.map((call) => ({ jsonrpc: '2.0', id: call.id, result: resultOf(call) })).reverse()
    const batch = createJsonRpcBatch({ rpcUrls: [url], timeoutMs: 2_000 })
    expect(await batch(calls)).toEqual([
      'eth_blockNumber#0',
      'eth_getTransactionReceipt#1',
      'eth_getTransactionReceipt#2',
    ])
  })

  it.each<[string, Answer]>([
    ['one answer for the whole batch', () => ({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'no' } })],
    ['an answer missing', (sent) => sent.slice(1).map((call) => ({ id: call.id, result: resultOf(call) }))],
    [
      'an id it did not send standing in for one it did',
      (sent) => sent.map((call) => ({ id: call.id === 2 ? 7 : call.id, result: resultOf(call) })),
    ],
    ['an error for one call', (sent) => sent.map((call) => ({ id: call.id, error: { code: -32000, message: 'x' } }))],
    ['an HTTP error status', () => new Raw(503, 'unavailable')],
    ['an answer that is not JSON', () => new Raw(200, '<html>')],
    ['an answer larger than any batch of receipts', () => new Raw(200, 'x'.repeat(17 * 1024 * 1024))],
    ['no answer within the timeout', () => HANG],
    ['an answer cut short by a dropped connection', () => CUT],
    ['an answer that stops coming before the timeout', () => STALL],
  ])('refuses %s, after trying every URL', async (_, wrong) => {
    answer = wrong
    requests = 0
    const batch = createJsonRpcBatch({ rpcUrls: [url, url], timeoutMs: 300 })
    await expect(batch(calls)).rejects.toThrow()
    expect(requests).toBe(4)
  })

  it('falls back to the next URL when the first cannot be reached', async () => {
    answer = (sent) => sent.map((call) => ({ id: call.id, result: resultOf(call) }))
    const refused = `http://127.0.0.1:${await closedPort()}`
    const batch = createJsonRpcBatch({ rpcUrls: [refused, url], timeoutMs: 2_000 })
    expect(await batch(calls)).toHaveLength(3)
  })
})
