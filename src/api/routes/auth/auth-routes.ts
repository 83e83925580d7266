// Everything under /api/auth/: wires the sign-in services (the mailer is an app plugin) to the routes.
import { deriveSignInCodeKey } from '../../../auth/sign-in-codes.ts'
import type { AppInstance } from '../../app-types.ts'
import { authEmailRoutes } from './email.ts'
import { authOAuthRoutes } from './oauth.ts'
import { createSignInLimiters } from './rate-limits.ts'
import { authSessionRoutes } from './session.ts'
import { createSignIn } from './sign-in.ts'

export async function authRoutes(app: AppInstance): Promise<void> {
  const { config, jwt } = app.deps
  const limiters = createSignInLimiters(app)
  const signIn = createSignIn(app)
  const codeSettings = {
    key: deriveSignInCodeKey(jwt.secret),
    ttlSeconds: config.signIn.codeTtlSeconds,
    maxAttempts: config.signIn.codeMaxAttempts,
  }
  authEmailRoutes(app, { codeSettings, limiters, mailer: app.mailer, signIn })
  authOAuthRoutes(app, { limiters, signIn })
  await app.register(authSessionRoutes)
}
