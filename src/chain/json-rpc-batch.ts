// One JSON-RPC batch sent at once, to the first RPC URL that answers it. viem batches concurrent calls behind a timer
// (`setTimeout(0)`: a millisecond or more on every request); a caller that already holds every call it needs sends
// them itself and saves that wait.
import { getHttpRpcClient } from 'viem/utils'

export interface RpcCall {
  method: string
  params: readonly unknown[]
}

/** The results in the order of `calls`; rejects when no URL answered every call without an error. */
export type JsonRpcBatch = (calls: readonly RpcCall[]) => Promise<unknown[]>

/** Tries per URL, as the chain client's transports do (one retry each). */
const ATTEMPTS_PER_URL = 2

export function createJsonRpcBatch(options: { rpcUrls: readonly string[]; timeoutMs: number }): JsonRpcBatch {
  const clients = options.rpcUrls.map((url) => getHttpRpcClient(url, { timeout: options.timeoutMs }))
  return async (calls) => {
    const body = calls.map((call, id) => ({ id, method: call.method, params: [...call.params] }))
    let failure: unknown
    for (const client of clients) {
      for (let attempt = 0; attempt < ATTEMPTS_PER_URL; attempt++) {
        try {
          return resultsInOrder(await client.request({ body }), calls.length)
        } catch (error) {
          failure = error
        }
      }
    }
    throw failure
  }
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
