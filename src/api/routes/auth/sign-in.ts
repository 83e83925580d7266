// What every sign-in route ends with once the user proved who they are: a new session, counted by provider.
import { Counter } from 'prom-client'
import type { TrustProvider } from '../../../auth/jwt.ts'
import { startSession } from '../../../auth/sessions.ts'
import type { PublicUser } from '../../../auth/users.ts'
import type { AppInstance } from '../../app-types.ts'
import { accountBlocked } from '../../authenticate.ts'

export interface SignInResult {
  token: string
  expiresAt: string
  user: PublicUser
}

/** Starts a session for a user who just proved who they are. */
export type SignIn = (user: PublicUser, trust: TrustProvider) => Promise<SignInResult>

export function createSignIn(app: AppInstance): SignIn {
  const { database, jwt, metrics } = app.deps
  const signIns = new Counter({
    name: 'auth_sign_ins_total',
    help: 'Successful sign-ins by provider',
    labelNames: ['provider'],
    registers: [metrics.registry],
  })
  return async (user, trust) => {
    if (user.blockedAt) throw accountBlocked()
    const session = await startSession(database.db, jwt, { id: user.id, email: user.email }, trust)
    signIns.inc({ provider: trust })
    return { token: session.token, expiresAt: session.expiresAt.toISOString(), user }
  }
}
