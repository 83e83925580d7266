// Liveness and readiness for orchestrators: /healthz while the process lives, /readyz while it can serve.
import { z } from 'zod'
import type { AppInstance } from '../app-types.ts'
import { ProblemError } from '../problem.ts'

const CHECK_TIMEOUT_MS = 2_000

const ReadySchema = z.object({
  status: z.literal('ready'),
  checks: z.object({ database: z.literal('ok'), chain: z.literal('ok') }),
})

export async function healthRoutes(app: AppInstance): Promise<void> {
  const { database, chain } = app.deps

  app.get(
    '/healthz',
    { schema: { tags: ['operations'], response: { 200: z.object({ status: z.literal('ok') }) } } },
    async () => ({ status: 'ok' as const }),
  )

  app.get('/readyz', { schema: { tags: ['operations'], response: { 200: ReadySchema } } }, async () => {
    const [databaseCheck, chainCheck] = await Promise.all([
      withTimeout(database.ping()),
      withTimeout(chain.client.getBlockNumber({ cacheTime: 0 })),
    ])
    if (!databaseCheck || !chainCheck || app.lifecycle.shuttingDown) {
      throw new ProblemError(503, 'NOT_READY', 'The service is not ready to serve requests', {
        extensions: {
          checks: {
            database: databaseCheck ? 'ok' : 'failing',
            chain: chainCheck ? 'ok' : 'failing',
            shuttingDown: app.lifecycle.shuttingDown,
          },
        },
      })
    }
    return { status: 'ready' as const, checks: { database: 'ok' as const, chain: 'ok' as const } }
  })
}

/** Resolves true when `work` succeeds in time, false when it fails or hangs. */
async function withTimeout(work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), CHECK_TIMEOUT_MS)
  })
  try {
    return await Promise.race([work.then(() => true).catch(() => false), timeout])
  } finally {
    clearTimeout(timer)
  }
}
