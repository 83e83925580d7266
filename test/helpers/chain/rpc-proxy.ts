// A JSON-RPC proxy in front of a node that records every HTTP round trip, and misbehaves as commercial RPC providers
// do: an unreachable chain, a provider throttling its callers, a connection that fails with the outcome unknown, an
// answer after the client gave up, refused connections, a provider's own error words.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface RpcCall {
  method: string
  params: unknown[]
}

/**
 * What becomes of a request the proxy intercepts: `hang` never answers it and never passes it on (the client times
 * out); `drop-after-forward` passes it on, then closes the connection without an answer (the node got it; the client
 * cannot know); `{ answerAfterMs }` passes it on at once and holds the node's answer that long (a slow network, or one
 * slower than the client's timeout); `{ refuseConnectionsMs }` passes it on, drops the answer and every open
 * connection, and refuses new connections that long (a provider's load balancer losing a backend); `{ status }`
 * answers that HTTP status itself (429 or 503 with `Retry-After`) without passing it on; `{ rpcError }` answers a
 * JSON-RPC error in a provider's words, after passing the request on when `forward` is set.
 */
export type Interception =
  | 'hang'
  | 'drop-after-forward'
  | { answerAfterMs: number }
  | { refuseConnectionsMs: number }
  | { status: number; retryAfterSeconds?: number }
  | { rpcError: { code: number; message: string }; forward?: boolean }

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
    if (typeof interception === 'object' && 'status' in interception) {
      const headers: Record<string, string> = { 'content-type': 'text/plain' }
      if (interception.retryAfterSeconds !== undefined) headers['retry-after'] = String(interception.retryAfterSeconds)
      response.writeHead(interception.status, headers).end(`HTTP ${interception.status} from the provider`)
      return
    }
    const forwarded = !(typeof interception === 'object' && 'rpcError' in interception && !interception.forward)
    const upstream = forwarded
      ? await fetch(targetUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
      : undefined
    const answer = await upstream?.text()
    if (interception === 'drop-after-forward') {
      request.socket.destroy()
      return
    }
    if (typeof interception === 'object' && 'refuseConnectionsMs' in interception) {
      request.socket.destroy()
      await refuseConnections(interception.refuseConnectionsMs)
      return
    }
    if (typeof interception === 'object' && 'rpcError' in interception) {
      const ids = (Array.isArray(parsed) ? parsed : [parsed]) as { id?: unknown }[]
      const errors = ids.map(({ id }) => ({ jsonrpc: '2.0', id: id ?? null, error: interception.rpcError }))
      response
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify(Array.isArray(parsed) ? errors : errors[0]))
      return
    }
    if (typeof interception === 'object' && 'answerAfterMs' in interception) {
      await new Promise((resolve) => setTimeout(resolve, interception.answerAfterMs))
    }
    response.writeHead(upstream!.status, { 'content-type': 'application/json' }).end(answer)
  }
  let refusing: Promise<void> | undefined
  /** Stops listening (new connections are refused) and drops the open ones, then listens again on the same port. */
  const refuseConnections = (ms: number): Promise<void> => {
    refusing ??= (async () => {
      await new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      })
      await new Promise((resolve) => setTimeout(resolve, ms))
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve))
    })().finally(() => {
      refusing = undefined
    })
    return refusing
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
    close: async () => {
      await refusing
      await new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
    },
  }
  return proxy
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = []
  for await (const chunk of request) chunks.push(chunk as Buffer)
  return Buffer.concat(chunks).toString('utf8')
}
