// A JSON-RPC proxy in front of anvil that records every HTTP round trip, and can play an unreachable chain, a
// provider throttling its callers, or a connection that fails with the outcome unknown.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RpcCall {
  method: string
  params: unknown[]
}

/**
 * What becomes of a request the proxy intercepts: `hang` never answers it and never passes it on (the client times
 * out); `drop-after-forward` passes it on, then closes the connection without an answer (the node got it; the client
 * cannot know); `{ answerAfterMs }` passes it on at once and holds the node's answer that long (a slow network).
 */
export type Interception = 'hang' | 'drop-after-forward' | { answerAfterMs: number }

export interface RpcProxy {
  url: string
  /** One entry per HTTP request (a JSON-RPC batch is one), each listing its calls. */
  requests: RpcCall[][]
  /**
   * Round trips that included any of `methods`. Verify fetches at least one receipt in every round trip it makes
   * (the block number only rides along), so the default counts verify's and nothing a background loop polls.
   */
  roundTrips(methods?: readonly string[]): RpcCall[][]
  reset(): void
  /** While down, every request is answered 503 as by an unreachable gateway. */
  down: boolean
  /** While throttled, every request is answered 429 as by a hosted provider over its rate limit. */
  throttled: boolean
  /** Decides, request by request, whether to intercept it; undefined passes everything through. */
  intercept: ((calls: RpcCall[]) => Interception | undefined) | undefined
  close(): Promise<void>
}

export const VERIFY_RPC_METHODS = ['eth_getTransactionReceipt'] as const

export async function startRpcProxy(targetUrl: string): Promise<RpcProxy> {
  const requests: RpcCall[][] = []
  const server = createServer((request, response) => {
    // The node may be stopped while a request is still in flight (a test ends, or plays a crash): answer as a
    // gateway whose upstream went away, instead of leaving a rejection nobody handles.
    forward(request, response).catch(() => {
      if (response.headersSent) response.destroy()
      else response.writeHead(502).end('upstream unavailable')
    })
  })
  const forward = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const body = await readBody(request)
    const parsed = JSON.parse(body) as RpcCall | RpcCall[]
    const calls = (Array.isArray(parsed) ? parsed : [parsed]).map(({ method, params }) => ({ method, params }))
    requests.push(calls)
    if (proxy.down) {
      response.writeHead(503).end('unavailable')
      return
    }
    if (proxy.throttled) {
      response.writeHead(429, { 'retry-after': '1' }).end('too many requests')
      return
    }
    const interception = proxy.intercept?.(calls)
    // Left open: the client gives up on its own timeout; closeAllConnections() ends it at close().
    if (interception === 'hang') return
    const upstream = await fetch(targetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    if (interception === 'drop-after-forward') {
      await upstream.arrayBuffer()
      request.socket.destroy()
      return
    }
    const answer = await upstream.text()
    if (typeof interception === 'object')
      await new Promise((resolve) => setTimeout(resolve, interception.answerAfterMs))
    response.writeHead(upstream.status, { 'content-type': 'application/json' }).end(answer)
  }
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  const proxy: RpcProxy = {
    url: `http://127.0.0.1:${port}`,
    requests,
    roundTrips(methods = VERIFY_RPC_METHODS) {
      return requests.filter((calls) => calls.some((call) => methods.includes(call.method)))
    },
    reset() {
      requests.length = 0
    },
    down: false,
    throttled: false,
    intercept: undefined,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
  return proxy
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
