// The countersignature e-mails for the app's lifetime: sends what is due every WEBHOOK_DISPATCH_INTERVAL_MS (the pace
// of the webhook deliveries it stands beside; 0: only by hand, as tests do). Stopped, its round finished, on close.
import fp from 'fastify-plugin'
import { CountersignNotices } from '../../events/countersign-notices.ts'
import type { AppInstance } from '../app-types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    countersignNotices: CountersignNotices
  }
}

export const countersignNoticesPlugin = fp(
  async (app: AppInstance) => {
    const { config, database } = app.deps
    const notices = new CountersignNotices(
      database.db,
      (to, subject, text) => app.mailer.sendNotice(to, subject, text),
      config.verifyBaseUrl,
      app.log,
    )
    app.decorate('countersignNotices', notices)
    const intervalMs = config.webhooks.dispatchIntervalMs
    let timer: NodeJS.Timeout | undefined
    let round: Promise<unknown> = Promise.resolve()
    let closed = false
    const schedule = () => {
      if (closed) return
      timer = setTimeout(() => {
        round = notices
          .tick()
          .catch((error: unknown) => app.log.warn({ err: error }, 'countersign notices failed'))
          .finally(schedule)
      }, intervalMs)
      timer.unref()
    }
    app.addHook('onReady', async () => {
      if (intervalMs > 0) schedule()
    })
    app.addHook('onClose', async () => {
      closed = true
      clearTimeout(timer)
      notices.stop()
      await round
    })
  },
  { name: 'countersign-notices', dependencies: ['mailer'] },
)
