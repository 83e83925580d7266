// The webhook dispatcher for the app's lifetime: delivers what is due every WEBHOOK_DISPATCH_INTERVAL_MS, tells an
// endpoint's owner by e-mail when it is disabled, and prunes the log past WEBHOOK_LOG_RETENTION_DAYS hourly. Stopped,
// with its attempts under way finished, when the app closes.
import { sql } from 'drizzle-orm'
import fp from 'fastify-plugin'
import { rows } from '../../db/sql-rows.ts'
import { WebhookDispatcher } from '../../events/webhook-dispatcher.ts'
import { pruneWebhookLog } from '../../events/webhook-retention.ts'
import type { AppInstance } from '../app-types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    webhookDispatcher: WebhookDispatcher
  }
}

const PRUNE_FIRST_AFTER_MS = 60 * 1000
const PRUNE_EVERY_MS = 60 * 60 * 1000

const REASONS = {
  gone: 'it answered 410 Gone, which says the endpoint no longer exists',
  failing: 'every delivery to it has failed for days',
}

export const webhooksPlugin = fp(
  async (app: AppInstance) => {
    const { config, database } = app.deps
    const dispatcher = new WebhookDispatcher(database.db, config.webhooks, app.log, async (endpoint) => {
      const [owner] = await rows(database.db, sql`SELECT email FROM users WHERE id = ${endpoint.userId}`)
      if (!owner) return
      app.mailer.sendNotice(
        String(owner.email),
        'A webhook endpoint was disabled',
        `Your webhook endpoint ${endpoint.url} was disabled: ${REASONS[endpoint.reason]}.\n\n` +
          'Events are no longer sent to it. Enable it again (PATCH /api/webhooks/:id with status "enabled", or ' +
          '`anchor webhooks enable`) once it answers, and replay what it missed.\n',
      )
    })
    app.decorate('webhookDispatcher', dispatcher)
    // The log's retention, hourly (src/events/webhook-retention.ts); with the dispatcher off, tests call it themselves.
    let pruning: NodeJS.Timeout | undefined
    let pruned: Promise<unknown> = Promise.resolve()
    const prune = () => {
      pruned = pruneWebhookLog(database.db, config.webhooks.logRetentionDays)
        .then((counts) => {
          if (counts.attempts + counts.deliveries + counts.notices > 0) app.log.info(counts, 'webhook log pruned')
        })
        .catch((error: unknown) => app.log.warn({ err: error }, 'webhook log pruning failed'))
    }
    app.addHook('onReady', async () => {
      dispatcher.start()
      if (config.webhooks.dispatchIntervalMs > 0) {
        // A minute after start, then hourly: an instance restarted more often than hourly still prunes.
        pruning = setTimeout(function again() {
          prune()
          pruning = setTimeout(again, PRUNE_EVERY_MS)
          pruning.unref()
        }, PRUNE_FIRST_AFTER_MS)
        pruning.unref()
      }
    })
    app.addHook('onClose', async () => {
      clearTimeout(pruning)
      await Promise.all([dispatcher.stop(), pruned])
    })
  },
  { name: 'webhooks', dependencies: ['mailer'] },
)
