// Liveness and readiness for orchestrators: /healthz while the process lives, /readyz while it can serve.
import { z } from 'zod'
import type { ContractState } from '../../chain/contract-check.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

const CHECK_TIMEOUT_MS = 2_000

const ReadySchema = z.object({
  status: z
    .enum(['ready', 'degraded'])
    .describe(
      'degraded: Redis (REDIS_URL) is not answering. The instance still serves relays, verifications and the library, ' +
        'so it stays in the balancer; sign-in answers 503 until Redis is back, and limits count per instance.',
    ),
  checks: z.object({
    database: z.literal('ok'),
    chain: z.literal('ok'),
    contract: z.literal('ok'),
    redis: z.enum(['ok', 'failing']).optional().describe('present when REDIS_URL is set'),
  }),
})

export async function healthRoutes(app: AppInstance): Promise<void> {
  const { database, redis } = app.deps
  const { contract } = app.relayer

  app.get(
    '/healthz',
    { schema: { tags: ['operations'], response: { 200: z.object({ status: z.literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  )

  app.get('/readyz', { schema: { tags: ['operations'], response: { 200: ReadySchema } } }, async () => {
    // The contract's code and the chain id in one round trip: a node restarted with an empty chain answers blocks and
    // calls as before, but every anchor sent to it would be mined without an event. The relayer's own view is checked
    // (and so kept current between its monitor's passes): while the contract is missing it takes no new anchors.
    const [databaseCheck, contractState, redisCheck] = await Promise.all([
      withTimeout(
        database.ping().then(
          () => true,
          () => false,
        ),
        false,
      ),
      withTimeout(contract.check(), 'unknown' as ContractState),
      redis === undefined
        ? undefined
        : withTimeout(
            redis.ping().then(
              () => true,
              () => false,
            ),
            false,
          ),
    ])
    if (!databaseCheck || contractState !== 'ok' || app.lifecycle.shuttingDown) {
      throw new ProblemError(503, 'NOT_READY', notReadyDetail(databaseCheck, contractState), {
        extensions: {
          checks: {
            database: databaseCheck ? 'ok' : 'failing',
            chain: contractState === 'unknown' ? 'failing' : contractState === 'wrong-chain' ? 'wrong-chain' : 'ok',
            contract: contractState === 'ok' ? 'ok' : contractState === 'missing' ? 'missing' : 'unknown',
            ...(redisCheck !== undefined && { redis: redisCheck ? 'ok' : 'failing' }),
            shuttingDown: app.lifecycle.shuttingDown,
          },
        },
      })
    }
    return {
      status: redisCheck === false ? ('degraded' as const) : ('ready' as const),
      checks: {
        database: 'ok' as const,
        chain: 'ok' as const,
        contract: 'ok' as const,
        ...(redisCheck !== undefined && { redis: redisCheck ? ('ok' as const) : ('failing' as const) }),
      },
    }
  })
}

function notReadyDetail(database: boolean, contract: ContractState): string {
  if (!database) return 'The service is not ready to serve requests: the database is not answering'
  if (contract === 'wrong-chain') return 'The service is not ready: the RPC node serves another chain than configured'
  if (contract === 'missing') {
    return 'The service is not ready: the RPC node has no anchoring contract at the configured address'
  }
  if (contract === 'unknown') return 'The service is not ready to serve requests: the RPC node is not answering'
  return 'The service is not ready to serve requests'
}

/** What `work` resolves to in time; `hung` when it does not answer within the check's timeout. */
async function withTimeout<T>(work: Promise<T>, hung: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(hung), CHECK_TIMEOUT_MS)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}
