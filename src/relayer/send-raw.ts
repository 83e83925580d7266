// Sends a signed transaction and says what became of it, telling "the node never got it" apart from "maybe it did".
import { BaseError, type Hex, HttpRequestError, RpcRequestError } from 'viem'
import type { ChainClient } from '../chain/chain-client.ts'

export type BroadcastOutcome =
  /** The node holds the transaction (or already did: "already known"). */
  | 'sent'
  /** Certainly not delivered: the connection was refused, or the node answered and refused it. */
  | 'rejected'
  /** The node says this nonce is used: ours if the node knows our hash, else someone else's. */
  | 'nonce-used'
  /** Another transaction with this nonce sits in the pool at a higher fee. */
  | 'underpriced'
  /** The request may or may not have reached the node (timeout, connection dropped mid-way). */
  | 'ambiguous'

// Errors raised before any byte reached the node.
const UNDELIVERED_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH'])
// HTTP answers of gateways and providers that did not hand the request to the node.
const UNDELIVERED_STATUSES = new Set([400, 401, 403, 404, 405, 413, 429, 502, 503])

export async function broadcastRaw(client: ChainClient, raw: Hex): Promise<BroadcastOutcome> {
  try {
    await client.request({ method: 'eth_sendRawTransaction', params: [raw] })
    return 'sent'
  } catch (error) {
    return classifySendError(error)
  }
}

export function classifySendError(error: unknown): BroadcastOutcome {
  const rpc = findCause(error, (e) => e instanceof RpcRequestError)
  if (rpc) {
    const text = messages(error).toLowerCase()
    if (/already known|known transaction|already imported|already exists|alreadyknown/.test(text)) return 'sent'
    if (/nonce too low|nonce has already been used|oldnonce|nonce is too low/.test(text)) return 'nonce-used'
    if (/underpriced|replacement fee too low/.test(text)) return 'underpriced'
    return 'rejected'
  }
  const http = findCause(error, (e) => e instanceof HttpRequestError) as HttpRequestError | undefined
  if (http?.status !== undefined && UNDELIVERED_STATUSES.has(http.status)) return 'rejected'
  const code = findCause(
    error,
    (e) =>
      typeof (e as NodeJS.ErrnoException).code === 'string' &&
      UNDELIVERED_CODES.has((e as NodeJS.ErrnoException).code!),
  )
  return code ? 'rejected' : 'ambiguous'
}

function findCause(error: unknown, test: (e: unknown) => boolean): unknown {
  let current: unknown = error
  for (let depth = 0; current !== undefined && current !== null && depth < 10; depth++) {
    if (test(current)) return current
    current = (current as { cause?: unknown }).cause
  }
  return undefined
}

function messages(error: unknown): string {
  const parts: string[] = []
  let current: unknown = error
  for (let depth = 0; current instanceof Error && depth < 10; depth++) {
    parts.push(current instanceof BaseError ? `${current.shortMessage} ${current.details}` : current.message)
    current = current.cause
  }
  return parts.join(' | ')
}
