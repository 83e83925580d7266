// The sign-in mailer for the app's lifetime (SMTP when SMTP_URL is set, the log otherwise), closed with the app.
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import { createMailer, type Mailer } from '../../auth/mailer.ts'
import type { AppInstance } from '../app-types.ts'

declare module 'fastify' {
  interface FastifyInstance {
    mailer: Mailer
  }
}

export const mailerPlugin = fp(
  async (app: AppInstance) => {
    const { config, metrics } = app.deps
    const mailer = await createMailer({
      smtpUrl: config.mail.smtpUrl,
      from: config.mail.from,
      production: config.production,
      codeTtlSeconds: config.signIn.codeTtlSeconds,
      logger: app.log,
      deliveries: new Counter({
        name: 'auth_sign_in_emails_total',
        help: 'Sign-in code e-mails by outcome (sent, failed, logged)',
        labelNames: ['outcome'],
        registers: [metrics.registry],
      }),
    })
    app.decorate('mailer', mailer)
    app.addHook('onClose', async () => mailer.close())
  },
  { name: 'mailer' },
)
