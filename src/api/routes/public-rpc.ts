// The embedded chain's public face (issue 38, item 7): `POST /rpc`, a JSON-RPC endpoint that forwards reads to the
// embedded anvil and answers everything else with "method not found". anvil itself answers every method, writes
// (`eth_sendTransaction` from its unlocked accounts, `eth_sendRawTransaction` signed with its public development keys)
// and `anvil_*` (impersonation, balances, mining) included, so its own port is never published: `/api/info` names this
// route as `publicRpcUrl`, and `anchor verify --rpc` and any wallet or explorer read through it.
import { z } from 'zod'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

export const READ_ONLY_RPC_PATH = '/rpc'

/** What reading anchors (and a wallet or explorer looking around) asks; nothing here writes or changes a node. */
const READ_METHODS = new Set([
  'eth_chainId',
  'net_version',
  'web3_clientVersion',
  'eth_blockNumber',
  'eth_getBlockByNumber',
  'eth_getBlockByHash',
  'eth_getBlockTransactionCountByNumber',
  'eth_getTransactionByHash',
  'eth_getTransactionReceipt',
  'eth_getLogs',
  'eth_call',
  'eth_estimateGas',
  'eth_getCode',
  'eth_getBalance',
  'eth_getStorageAt',
  'eth_getTransactionCount',
  'eth_gasPrice',
  'eth_maxPriorityFeePerGas',
  'eth_feeHistory',
  'eth_syncing',
])

const MAX_BATCH = 20
const FORWARD_TIMEOUT_MS = 10_000

const RpcRequest = z.object({
  jsonrpc: z.literal('2.0'),
  id: z.union([z.string().max(100), z.number(), z.null()]).optional(),
  method: z.string().max(100),
  params: z.union([z.array(z.unknown()), z.record(z.string(), z.unknown())]).optional(),
})
type RpcRequest = z.infer<typeof RpcRequest>
const RpcBody = z.union([RpcRequest, z.array(RpcRequest).min(1).max(MAX_BATCH)])

interface RpcAnswer {
  jsonrpc: '2.0'
  id: RpcRequest['id'] | null
  result?: unknown
  error?: { code: number; message: string }
}

export async function publicRpcRoutes(app: AppInstance): Promise<void> {
  const { chain, config } = app.deps
  const target = chain.embeddedRpcUrl
  if (target === undefined) return
  const limitPerIp = app.limiter({
    name: 'public-rpc',
    max: config.limits.verifyPerIpPerMinute,
    timeWindowMs: 60_000,
    what: 'RPC requests',
  })

  /** anvil's answers to `requests` (all read methods), in their order, each with the id it was asked with. */
  async function forward(requests: RpcRequest[]): Promise<RpcAnswer[]> {
    // Positions as ids on the way, so that answers map back whatever ids (or duplicates) the client chose.
    const body = requests.map((request, index) => ({ ...request, id: index }))
    const response = await fetch(target!, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(FORWARD_TIMEOUT_MS),
    }).catch(() => {
      throw new ProblemError(502, 'CHAIN_UNAVAILABLE', 'The embedded chain did not answer; try again')
    })
    const answers = (await response.json().catch(() => null)) as RpcAnswer[] | null
    if (!Array.isArray(answers)) throw new ProblemError(502, 'CHAIN_UNAVAILABLE', 'The embedded chain did not answer')
    return requests.map((request, index) => {
      const answer = answers.find((candidate) => candidate.id === index)
      const { result, error } = answer ?? { error: { code: -32603, message: 'no answer' } }
      return { jsonrpc: '2.0', id: request.id ?? null, ...(error ? { error } : { result }) }
    })
  }

  app.post(
    READ_ONLY_RPC_PATH,
    {
      onRequest: limitPerIp.onRequest,
      schema: {
        tags: ['verify'],
        summary: 'Read the embedded development chain (JSON-RPC, read methods only)',
        body: RpcBody,
      },
    },
    async (request, reply) => {
      const batch = Array.isArray(request.body) ? request.body : [request.body]
      const readable = batch.filter((call) => READ_METHODS.has(call.method))
      const forwarded = readable.length > 0 ? await forward(readable) : []
      const answers = batch.map((call): RpcAnswer => {
        if (READ_METHODS.has(call.method)) return forwarded[readable.indexOf(call)]!
        return {
          jsonrpc: '2.0',
          id: call.id ?? null,
          error: { code: -32601, message: `${call.method} is not available: this endpoint only reads the chain` },
        }
      })
      reply.header('cache-control', 'no-store')
      return Array.isArray(request.body) ? answers : answers[0]
    },
  )
}
