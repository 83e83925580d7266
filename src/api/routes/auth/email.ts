// E-mail sign-in: a 6-digit code sent to the address, exchanged for a session.
import { z } from 'zod'
import type { Mailer } from '../../../auth/mailer.ts'
import { consumeSignInCode, issueSignInCode, type SignInCodeSettings } from '../../../auth/sign-in-codes.ts'
import { normalizeEmail, signInUser } from '../../../auth/users.ts'
import type { AppInstance } from '../../app-types.ts'
import { ProblemError, ProblemSchema } from '../../problem.ts'
import type { SignInLimiters } from './rate-limits.ts'
import { EmailSchema, SignInResponseSchema } from './schemas.ts'
import type { SignIn } from './sign-in.ts'

export interface EmailSignInDependencies {
  codeSettings: SignInCodeSettings
  limiters: SignInLimiters
  mailer: Mailer
  signIn: SignIn
}

export function authEmailRoutes(app: AppInstance, deps: EmailSignInDependencies): void {
  const { config, database } = app.deps
  const db = database.db
  const { codeSettings, limiters, mailer, signIn } = deps

  app.post(
    '/api/auth/magic-link',
    {
      schema: {
        tags: ['auth'],
        summary: 'E-mail a 6-digit sign-in code',
        description:
          'The same 202 answer whether or not the address has an account. The code expires after ' +
          `${Math.round(config.signIn.codeTtlSeconds / 60)} minutes; a new request replaces older codes.`,
        body: z.strictObject({ email: EmailSchema }),
        response: {
          202: z.object({ sent: z.literal(true) }),
          400: ProblemSchema,
          429: ProblemSchema.describe('RATE_LIMITED: too many codes for this address or from this IP'),
        },
      },
    },
    async (request, reply) => {
      const email = normalizeEmail(request.body.email)
      await limiters.codeRequestsPerIp(request)
      await limiters.codeSendsPerEmail(request, email)
      // No account lookup here: known and unknown addresses take the same path, and mail leaves in the background.
      const code = await issueSignInCode(db, codeSettings, email)
      mailer.sendSignInCode(email, code)
      return reply.code(202).send({ sent: true as const })
    },
  )

  app.post(
    '/api/auth/magic-link/verify',
    {
      schema: {
        tags: ['auth'],
        summary: 'Sign in with an e-mail code',
        description: `A code works once; after ${codeSettings.maxAttempts} wrong attempts it is dead.`,
        body: z.strictObject({ email: EmailSchema, code: z.string().regex(/^\d{6}$/, 'six digits') }),
        response: {
          200: SignInResponseSchema,
          400: ProblemSchema,
          401: ProblemSchema.describe('INVALID_CODE: wrong, dead, used or expired code'),
          429: ProblemSchema,
        },
      },
    },
    async (request) => {
      await limiters.verificationsPerIp(request)
      const email = normalizeEmail(request.body.email)
      if (!(await consumeSignInCode(db, codeSettings, email, request.body.code))) {
        throw new ProblemError(401, 'INVALID_CODE', 'The code is wrong, expired or already used; request a new one')
      }
      const user = await signInUser(db, { email, provider: 'email' }, config.defaultPlan)
      return signIn(user, 'email')
    },
  )
}
