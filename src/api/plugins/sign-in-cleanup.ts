// Expired sign-in flows, codes and exchange codes are useless, and so are deleted accounts' usage of past months; a
// periodic sweep for the app's lifetime keeps the tables small.
import fp from 'fastify-plugin'
import { deleteExpiredDeletedUsage } from '../../accounts/delete-account.ts'
import { deleteExpiredExchangeCodes } from '../../auth/exchange-codes.ts'
import { deleteExpiredOAuthFlows } from '../../auth/oauth-flows.ts'
import { deleteExpiredSignInCodes } from '../../auth/sign-in-codes.ts'
import type { AppInstance } from '../app-types.ts'

const CLEANUP_INTERVAL_MS = 10 * 60 * 1000
/** Spent and expired codes are kept a day for investigations, then dropped. */
const CODE_RETENTION_SECONDS = 24 * 60 * 60

export const signInCleanupPlugin = fp(
  async (app: AppInstance) => {
    const db = app.deps.database.db
    const cleanup = setInterval(() => {
      const now = new Date()
      Promise.all([
        deleteExpiredSignInCodes(db, CODE_RETENTION_SECONDS, now),
        deleteExpiredOAuthFlows(db, now),
        deleteExpiredExchangeCodes(db, now),
        deleteExpiredDeletedUsage(db, now),
      ]).catch((error: Error) => app.log.warn({ err: error.message }, 'sign-in cleanup failed'))
    }, CLEANUP_INTERVAL_MS)
    cleanup.unref()
    app.addHook('onClose', async () => clearInterval(cleanup))
  },
  { name: 'sign-in-cleanup' },
)
