// Delivers sign-in codes and notices (a webhook endpoint disabled, a countersignature): over SMTP when SMTP_URL is set, else (development
// only) as one dedicated log line.
import type { FastifyBaseLogger } from 'fastify'
import type { Transporter } from 'nodemailer'
import type { Counter } from 'prom-client'

export interface MailerOptions {
  smtpUrl: string | undefined
  from: string
  production: boolean
  codeTtlSeconds: number
  logger: FastifyBaseLogger
  /** Counts deliveries by outcome (`sent`, `failed`, `logged`). */
  deliveries: Counter<'outcome'>
}

export interface Mailer {
  /**
   * Starts the delivery and returns at once: the HTTP answer must not wait for (or reveal anything through) the
   * mail server. Failures are logged without the address or the code.
   */
  sendSignInCode(to: string, code: string): void
  /**
   * A notice about the account (a webhook endpoint disabled, a countersignature); resolves with whether the mail server
   * took it (true when there is none in development: it is logged). It never rejects.
   */
  sendNotice(to: string, subject: string, text: string): Promise<boolean>
  /** Resolves once every started delivery has ended (shutdown and tests). */
  idle(): Promise<void>
  close(): Promise<void>
}

export async function createMailer(options: MailerOptions): Promise<Mailer> {
  const { logger, deliveries } = options
  if (options.smtpUrl === undefined && options.production) {
    // The config refuses this already; a mailer that would log codes in production must never exist.
    throw new Error('SMTP_URL is required in production')
  }
  // nodemailer (~40 ms of module loading) only when there is a mail server to talk to, as the database and Redis
  // drivers are loaded only when configured.
  const transport: Transporter | undefined =
    options.smtpUrl === undefined ? undefined : (await import('nodemailer')).default.createTransport(options.smtpUrl)
  const inFlight = new Set<Promise<boolean>>()
  const minutes = Math.round(options.codeTtlSeconds / 60)

  const send = (to: string, subject: string, text: string, what: string): Promise<boolean> => {
    const delivery = transport!
      .sendMail({ from: options.from, to, subject, text })
      .then(
        () => {
          deliveries.inc({ outcome: 'sent' })
          return true
        },
        (error: { code?: unknown; responseCode?: unknown }) => {
          deliveries.inc({ outcome: 'failed' })
          // Only the error's classification: messages can quote the recipient or the mail body.
          logger.warn(
            { smtpError: String(error.code ?? 'unknown'), smtpResponseCode: error.responseCode },
            `${what} could not be sent`,
          )
          return false
        },
      )
      .finally(() => inFlight.delete(delivery))
    inFlight.add(delivery)
    return delivery
  }

  return {
    sendSignInCode(to, code) {
      if (transport === undefined) {
        // The one place a code is written anywhere but an e-mail: development without SMTP. Besides the JSON log line,
        // a plain one on the terminal, set apart, where the person who just asked for it looks (the README says so).
        logger.warn(`Sign-in code for ${to}: ${code} (development only: SMTP_URL is not set, so codes are logged)`)
        process.stderr.write(`\n    Sign-in code for ${to}: ${code}    (development: SMTP_URL is not set)\n\n`)
        deliveries.inc({ outcome: 'logged' })
        return
      }
      void send(
        to,
        'Your sign-in code',
        `Your sign-in code is ${code}.\n\nIt expires in ${minutes} minutes and works once. If you did not ask for it, ignore this e-mail.\n`,
        'a sign-in e-mail',
      )
    },
    sendNotice(to, subject, text) {
      if (transport === undefined) {
        logger.warn({ subject }, 'a notice e-mail was not sent: SMTP_URL is not set (development)')
        deliveries.inc({ outcome: 'logged' })
        return Promise.resolve(true)
      }
      return send(to, subject, text, 'a notice e-mail')
    },
    async idle() {
      await Promise.all(inFlight)
    },
    async close() {
      await Promise.all(inFlight)
      transport?.close()
    },
  }
}
