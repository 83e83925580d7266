// Entry point of `npm run admin -- users <action> <email|id> …` (admin-command.ts) and `npm run admin -- reconcile`
// (reconcile-command.ts): the service's own configuration names the database, Redis and the chain.
import { resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { cacheKey } from '../auth/sessions.ts'
import { connectChain } from '../chain/connect-chain.ts'
import { loadConfigFromProcess } from '../config/load-config.ts'
import { openMigratedDatabase } from '../db/open-migrated-database.ts'
import { announce, CHANNELS } from '../redis-announcements.ts'
import { createRelayContext, relayerSettingsOf } from '../relayer/create-relay-context.ts'
import { adminUsage, runAdminCommand } from './admin-command.ts'
import { reconcileUsage, runReconcileCommand } from './reconcile-command.ts'

const argv = process.argv.slice(2)
if (argv.includes('--help') || argv.length === 0) {
  process.stdout.write(`${adminUsage}\n\n${reconcileUsage}\n`)
} else if (argv[0] === 'reconcile') {
  process.exitCode = await runReconcileCommand({
    stdout: process.stdout,
    async open() {
      const config = loadConfigFromProcess()
      const dataDir = resolve(config.dataDir)
      const logger = pino({ level: 'info' }, process.stderr) as unknown as FastifyBaseLogger
      // Two connections: the migrator holds its lock on one and migrates on another (one alone waits forever).
      const database = await openMigratedDatabase(config.database.url, dataDir, 2)
      const { chain, embedded } = await connectChain(config, dataDir, logger)
      const context = createRelayContext({
        db: database.db,
        chain,
        ...relayerSettingsOf(config),
        log: logger.child({ component: 'relayer' }),
      })
      return {
        reconcile: () => context.reconciliation.run(),
        async close() {
          chain.closeSigners?.()
          await embedded?.stop()
          await database.close()
        },
      }
    },
  })
} else {
  process.exitCode = await runAdminCommand(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    async open() {
      const config = loadConfigFromProcess()
      // As the service opens it: a data directory never used yet gets the schema. Two connections: the migrator holds
      // its lock on one and migrates on another (one alone waits forever on PostgreSQL).
      const database = await openMigratedDatabase(config.database.url, resolve(config.dataDir), 2)
      const { Redis } = await import('ioredis')
      const redis = config.redis.url ? new Redis(config.redis.url, { maxRetriesPerRequest: 1 }) : undefined
      return {
        db: database.db,
        plans: config.plans,
        defaultPlan: config.defaultPlan,
        async announceEnded(userId, sessionIds) {
          if (!redis) {
            if (sessionIds.length > 0)
              process.stderr.write('note: no REDIS_URL: other instances drop these sessions within 5 s\n')
            return
          }
          for (const sessionId of sessionIds) await announce(redis, CHANNELS.sessionEnded, cacheKey(sessionId, userId))
        },
        async announceErased(txHashes) {
          if (!redis) {
            if (txHashes.length > 0)
              process.stderr.write('note: no REDIS_URL: instances forget the erased verifications within 60 s\n')
            return
          }
          for (const txHash of txHashes) await announce(redis, CHANNELS.payloadErased, txHash)
        },
        async close() {
          redis?.disconnect()
          await database.close()
        },
      }
    },
  })
}
