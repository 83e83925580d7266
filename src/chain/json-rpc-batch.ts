// One JSON-RPC batch sent at once, to the first RPC URL that answers it. viem batches concurrent calls behind a timer
// (`setTimeout(0)`: a millisecond or more on every request), and its HTTP client goes through fetch, whose machinery
// costs ~0.4 ms a request against ~0.1 ms for node:http on a kept-alive connection (measured: docs/performance.md);
// a caller that already holds every call it needs sends them itself, the plain way.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http'
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https'
import { urlToHttpOptions } from 'node:url'

export interface RpcCall {
  method: string
  params: readonly unknown[]
}

/** The results in the order of `calls`; rejects when no URL answered every call without an error. */
export type JsonRpcBatch = (calls: readonly RpcCall[]) => Promise<unknown[]>

/** Tries per URL, as the chain client's transports do (one retry each). */
const ATTEMPTS_PER_URL = 2
/** Far above any batch of receipts a verify asks for; a node answering more is not answering that. */
const MAX_ANSWER_BYTES = 16 * 1024 * 1024
/** Idle kept-alive connections close after this, before a node or proxy closes them under a request. */
const IDLE_CONNECTION_MS = 4_000

export function createJsonRpcBatch(options: { rpcUrls: readonly string[]; timeoutMs: number }): JsonRpcBatch {
  const endpoints = options.rpcUrls.map((url) => endpointOf(new URL(url)))
  return async (calls) => {
    const body = JSON.stringify(
      calls.map((call, id) => ({ jsonrpc: '2.0', id, method: call.method, params: call.params })),
    )
    let failure: unknown
    for (const endpoint of endpoints) {
      for (let attempt = 0; attempt < ATTEMPTS_PER_URL; attempt++) {
        try {
          return resultsInOrder(await endpoint.post(body, options.timeoutMs), calls.length)
        } catch (error) {
          failure = error
        }
      }
    }
    throw failure
  }
}

interface Endpoint {
  post(body: string, timeoutMs: number): Promise<unknown>
}

function endpointOf(url: URL): Endpoint {
  const https = url.protocol === 'https:'
  const send = https ? httpsRequest : httpRequest
  const agent = https
    ? new HttpsAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS })
    : new HttpAgent({ keepAlive: true, timeout: IDLE_CONNECTION_MS })
  // Host, port, path and credentials taken from the URL once, not parsed again for every batch.
  const target = { ...urlToHttpOptions(url), method: 'POST', agent }
  const headers = { 'content-type': 'application/json', accept: 'application/json' }
  return {
    post: (body, timeoutMs) => {
      // A plain timer rather than AbortSignal.timeout, whose signal, listeners and event objects cost each batch more
      // than the rest of its dispatch; destroying the request also fails an answer that is still arriving.
      let deadline: NodeJS.Timeout | undefined
      const answered = new Promise((resolve, reject) => {
        const request = send(
          { ...target, headers: { ...headers, 'content-length': Buffer.byteLength(body) } },
          (response) => readJson(response).then(resolve, reject),
        )
        // Errors name the host at most, never the URL's path or query, where a provider's API key may be.
        request.on('error', reject)
        deadline = setTimeout(
          () => request.destroy(new Error(`the RPC did not answer within ${timeoutMs} ms`)),
          timeoutMs,
        )
        request.end(body)
      })
      return answered.finally(() => clearTimeout(deadline))
    },
  }
}

/** The answer's JSON, read through the stream's events (an async iterator costs a promise per chunk). */
function readJson(response: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    let size = 0
    response.on('data', (chunk: Buffer) => {
      size += chunk.length
      if (size > MAX_ANSWER_BYTES) {
        response.destroy()
        reject(new Error('the RPC answer is too large'))
        return
      }
      chunks.push(chunk)
    })
    // Also a connection dropped mid-answer, or destroyed at the deadline (Node fails the answer with an error).
    response.on('error', reject)
    response.on('end', () => {
      if (response.statusCode !== 200) reject(new Error(`the RPC answered HTTP ${response.statusCode}`))
      else {
        try {
          resolve(JSON.parse(Buffer.concat(chunks, size).toString('utf8')))
        } catch {
          reject(new Error('the RPC answered something other than JSON'))
        }
      }
    })
  })
}

function resultsInOrder(responses: unknown, count: number): unknown[] {
  // A node that refuses the whole batch answers with one error object instead of an array.
  if (!Array.isArray(responses)) throw new Error('the RPC answered the batch with a single response')
  const results = new Array<unknown>(count)
  const answered = new Set<number>()
  for (const response of responses as { id: number; result?: unknown; error?: { code: number; message: string } }[]) {
    if (response.error !== undefined) {
      throw new Error(`the RPC answered ${response.error.code} to a call of the batch`, { cause: response.error })
    }
    // An id the batch did not send cannot stand in for one it did.
    if (!Number.isInteger(response.id) || response.id < 0 || response.id >= count) {
      throw new Error('the RPC answered a call the batch did not make')
    }
    results[response.id] = response.result
    answered.add(response.id)
  }
  if (answered.size !== count) throw new Error(`the RPC answered ${answered.size} of ${count} calls`)
  return results
}
