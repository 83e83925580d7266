// The signed-in user's own view (`/me`) and logout.
import { z } from 'zod'
import { findUser, monthlyLimitOf, monthlyUsage } from '../../../auth/users.ts'
import type { AppInstance } from '../../app-types.ts'
import { ProblemError, ProblemSchema } from '../../problem.ts'
import { UserSchema } from './schemas.ts'

const security = [{ bearerAuth: [] }]

/** Registered as its own scope: every route here is protected, and the token is checked before anything else. */
export async function authSessionRoutes(app: AppInstance): Promise<void> {
  const { config, database, sessions } = app.deps
  app.addHook('onRequest', app.authenticate)
  const db = database.db

  app.get(
    '/api/auth/me',
    {
      schema: {
        tags: ['auth'],
        summary: 'The signed-in user, plan and anchor quota of the current UTC month',
        security,
        response: {
          200: z.object({
            user: UserSchema,
            usage: z.object({
              used: z.number().int(),
              limit: z.number().int(),
              resetsAt: z.iso.datetime().describe('Start of the next UTC month'),
            }),
          }),
          401: ProblemSchema,
        },
      },
    },
    async (request) => {
      const user = await findUser(db, request.user.id)
      if (!user) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      const limit = monthlyLimitOf(config, user)
      return { user, usage: await monthlyUsage(db, user.id, limit) }
    },
  )

  app.post(
    '/api/auth/logout',
    {
      schema: {
        tags: ['auth'],
        summary: 'End the session: the token stops working at once',
        security,
        response: { 204: z.null().describe('Signed out'), 401: ProblemSchema },
      },
    },
    async (request, reply) => {
      await sessions.revoke(request.user.sessionId, request.user.id)
      return reply.code(204).send(null)
    },
  )
}
