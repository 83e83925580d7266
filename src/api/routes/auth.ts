// Everything under /api/auth/: builds the sign-in services from the app's dependencies and registers the routes.
import { Counter } from 'prom-client'
import { deleteExpiredExchangeCodes } from '../../auth/exchange-codes.ts'
import type { TrustProvider } from '../../auth/jwt.ts'
import { createMailer } from '../../auth/mailer.ts'
import { deleteExpiredOAuthFlows } from '../../auth/oauth-flows.ts'
import { startSession } from '../../auth/sessions.ts'
import { deleteExpiredSignInCodes, deriveSignInCodeKey } from '../../auth/sign-in-codes.ts'
import type { PublicUser } from '../../auth/users.ts'
import type { AppInstance } from '../app.ts'
import { authEmailRoutes } from './auth-email.ts'
import { authOAuthRoutes } from './auth-oauth.ts'
import { registerSignInLimiters } from './auth-rate-limits.ts'
import { authSessionRoutes } from './auth-session.ts'

export interface SignInResult {
  token: string
  expiresAt: string
  user: PublicUser
}

/** Starts a session for a user who just proved who they are. */
export type SignIn = (user: PublicUser, trust: TrustProvider) => Promise<SignInResult>

const CLEANUP_INTERVAL_MS = 10 * 60 * 1000
/** Spent and expired codes are kept a day for investigations, then dropped. */
const CODE_RETENTION_SECONDS = 24 * 60 * 60

export async function authRoutes(app: AppInstance): Promise<void> {
  const { config, database, jwt, metrics } = app.deps
  const db = database.db

  const limiters = await registerSignInLimiters(app)
  const mailer = createMailer({
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
  const signIns = new Counter({
    name: 'auth_sign_ins_total',
    help: 'Successful sign-ins by provider',
    labelNames: ['provider'],
    registers: [metrics.registry],
  })

  const signIn: SignIn = async (user, trust) => {
    const session = await startSession(db, jwt, { id: user.id, email: user.email }, trust)
    signIns.inc({ provider: trust })
    return { token: session.token, expiresAt: session.expiresAt.toISOString(), user }
  }

  // Expired flows, codes and exchange codes are useless; a periodic sweep keeps the tables small.
  const cleanup = setInterval(() => {
    const now = new Date()
    Promise.all([
      deleteExpiredSignInCodes(db, CODE_RETENTION_SECONDS, now),
      deleteExpiredOAuthFlows(db, now),
      deleteExpiredExchangeCodes(db, now),
    ]).catch((error: Error) => app.log.warn({ err: error.message }, 'sign-in cleanup failed'))
  }, CLEANUP_INTERVAL_MS)
  cleanup.unref()
  app.addHook('onClose', async () => {
    clearInterval(cleanup)
    await mailer.close()
  })

  const codeSettings = {
    key: deriveSignInCodeKey(jwt.secret),
    ttlSeconds: config.signIn.codeTtlSeconds,
    maxAttempts: config.signIn.codeMaxAttempts,
  }
  authEmailRoutes(app, { codeSettings, limiters, mailer, signIn })
  authOAuthRoutes(app, { limiters, signIn })
  await app.register(authSessionRoutes)
}
