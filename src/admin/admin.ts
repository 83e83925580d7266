// Entry point of `npm run admin -- users <action> <email|id> …` (admin-command.ts): the service's own configuration
// names the database and Redis.
import { cacheKey } from '../auth/sessions.ts'
import { loadConfigFromProcess } from '../config.ts'
import { openDatabase, pgliteDirectory } from '../db/database.ts'
import { migrateDatabase } from '../db/migrate.ts'
import { prepareNewPgliteDirectory } from '../db/pglite-template.ts'
import { announce, CHANNELS } from '../redis-announcements.ts'
import { adminUsage, runAdminCommand } from './admin-command.ts'

const argv = process.argv.slice(2)
if (argv.includes('--help') || argv.length === 0) {
  process.stdout.write(`${adminUsage}\n`)
} else {
  process.exitCode = await runAdminCommand(argv, {
    stdout: process.stdout,
    stderr: process.stderr,
    async open() {
      const config = loadConfigFromProcess()
      // As the service opens it: a data directory never used yet gets the schema (migrations are idempotent).
      const pgliteDir = pgliteDirectory(config.dataDir)
      if (config.database.url === undefined) await prepareNewPgliteDirectory(pgliteDir)
      const database = await openDatabase({
        url: config.database.url,
        pgliteDir,
        poolSize: 1,
      })
      await migrateDatabase(database)
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
