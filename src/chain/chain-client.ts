import { type Chain, createPublicClient, defineChain, fallback, http, type PublicClient, type Transport } from 'viem'
import { createJsonRpcBatch, type JsonRpcBatch } from './json-rpc-batch.ts'
import { createRawSender, type RawSender } from './raw-sender.ts'

/**
 * viem's public client; a batch sender for callers that hold every call they need at once; and the one way signed
 * transactions are sent: once per URL, never retried by the transport.
 */
export type ChainClient = PublicClient<Transport, Chain> & { requestBatch: JsonRpcBatch; sendRaw: RawSender }

export interface ChainClientOptions {
  /** One or more JSON-RPC URLs; later ones take over when earlier ones fail. */
  rpcUrls: string[]
  chainId: number
  pollingIntervalMs: number
  /** Per-request timeout; a hung RPC must not hang a client request. */
  timeoutMs?: number
}

export function defineAnchorChain(chainId: number, rpcUrls: string[]): Chain {
  return defineChain({
    id: chainId,
    name: `chain-${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: rpcUrls } },
  })
}

export function createChainClient(options: ChainClientOptions): ChainClient {
  const timeout = options.timeoutMs ?? 10_000
  const transports = options.rpcUrls.map((url) => http(url, { batch: { wait: 0 }, timeout, retryCount: 1 }))
  const requestBatch = createJsonRpcBatch({ rpcUrls: options.rpcUrls, timeoutMs: timeout })
  const sendRaw = createRawSender({ rpcUrls: options.rpcUrls, timeoutMs: timeout })
  return createPublicClient({
    chain: defineAnchorChain(options.chainId, options.rpcUrls),
    transport: transports.length === 1 ? transports[0]! : fallback(transports),
    pollingInterval: options.pollingIntervalMs,
  }).extend(() => ({ requestBatch, sendRaw }))
}
