// The caller's own account, as data-protection law gives them the rights to it: GET /api/account/export, everything the
// service holds about them as one JSON document (src/accounts/account-export.ts), and DELETE /api/account
// (src/accounts/delete-account.ts), and the e-mails the account asked for (GET and PUT /api/account/notifications).
import { sql } from 'drizzle-orm'
import { z } from 'zod'
import { exportAccount } from '../../accounts/account-export.ts'
import { deleteAccount } from '../../accounts/delete-account.ts'
import { rows } from '../../db/sql-rows.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

const HOUR_MS = 3_600_000
/**
 * How recent a sign-in deleting the account needs: a token lives 24 hours, and one left on a shared machine or copied
 * from a log must not be able to destroy the account and its data. Signing in again (a fresh e-mail code or provider
 * sign-in) gives a token that can, for this long.
 */
const RECENT_SIGN_IN_MS = 10 * 60_000
/** Exports per user per hour: a document can be as large as the library (images included). */
const EXPORTS_PER_HOUR = 10

const Timestamp = z.string().describe('ISO 8601 UTC with milliseconds')
const LibraryMarker = z.object({ id: z.string(), deletedAt: Timestamp })
const LibraryItem = z.object({
  id: z.string(),
  label: z.string(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  deletedAt: z.null(),
})

const AccountExportSchema = z.object({
  exportedAt: Timestamp,
  account: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    authProvider: z.string(),
    providerId: z.string().nullable(),
    plan: z.string(),
    monthlyLimit: z.number().int().nullable(),
    blockedAt: Timestamp.nullable(),
    notifications: z.object({ countersigned: z.boolean() }),
    createdAt: Timestamp,
    usage: z.object({ period: z.string(), used: z.number().int(), limit: z.number().int() }),
    usageHistory: z.array(z.object({ period: z.string(), used: z.number().int() })),
  }),
  operatorActions: z.array(z.object({ at: Timestamp, action: z.string(), before: z.unknown(), after: z.unknown() })),
  sessions: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      createdAt: Timestamp,
      expiresAt: Timestamp,
      revokedAt: Timestamp.nullable(),
    }),
  ),
  signerCertificates: z.array(
    z.object({
      serialNumber: z.string(),
      certificate: z.string(),
      createdAt: Timestamp,
      notAfter: Timestamp,
      revokedAt: Timestamp.nullable(),
    }),
  ),
  anchors: z.array(
    z.object({
      txHash: z.string(),
      compositeHash: z.string(),
      previousTxHash: z.string(),
      chainId: z.number().int(),
      status: z.string(),
      blockNumber: z.number().int().nullable(),
      encryptedPayload: z.string().nullable(),
      attestation: z.object({ trust: z.string(), verified: z.boolean(), identityCommitment: z.string() }).nullable(),
      pdfSignature: z
        .object({ digest: z.string(), timestampTime: Timestamp, timestampAuthority: z.string() })
        .nullable(),
      createdAt: Timestamp,
      confirmedAt: Timestamp.nullable(),
    }),
  ),
  events: z.array(z.object({ id: z.string(), type: z.string(), timestamp: Timestamp, data: z.unknown() })),
  library: z.object({
    signatures: z.array(z.union([LibraryItem.extend({ base64Png: z.string() }), LibraryMarker])),
    snippets: z.array(z.union([LibraryItem.extend({ text: z.string(), fontSize: z.number() }), LibraryMarker])),
  }),
})

const NotificationsSchema = z.strictObject({
  countersigned: z
    .boolean()
    .describe('An e-mail when someone signs after you: an anchor.countersigned event of your account'),
})

export async function accountRoutes(app: AppInstance): Promise<void> {
  const { config, database, sessions } = app.deps
  app.addHook('onRequest', app.authenticate)
  const limitExports = app.limiter({
    name: 'account-export',
    max: EXPORTS_PER_HOUR,
    timeWindowMs: HOUR_MS,
    what: 'account exports',
    key: (request) => request.user.id,
  })

  app.delete(
    '/api/account',
    {
      schema: {
        tags: ['auth'],
        summary: 'Delete your account (needs a sign-in of the last 10 minutes)',
        description:
          'Sessions, library, sign-in codes and the account go; the anchors stay on chain, their stored ciphertexts and ' +
          'attestations erased (verification then says payloadErased). This month’s usage is kept for the address.',
        security: [{ bearerAuth: [] }],
        response: {
          204: z.null().describe('Deleted'),
          401: ProblemSchema,
          403: ProblemSchema.describe('REAUTHENTICATION_REQUIRED: sign in again, then delete within 10 minutes'),
        },
      },
    },
    async (request, reply) => {
      const signedInAgo = Date.now() - request.user.issuedAt.getTime()
      if (signedInAgo > RECENT_SIGN_IN_MS) {
        throw new ProblemError(
          403,
          'REAUTHENTICATION_REQUIRED',
          `Deleting the account needs a sign-in of the last ${RECENT_SIGN_IN_MS / 60_000} minutes: sign in again, then delete`,
        )
      }
      const deleted = await deleteAccount(database.db, request.user.id)
      if (!deleted) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      await sessions.forget(deleted.sessionIds, request.user.id)
      await app.verify.erased(deleted.erasedTxHashes)
      request.log.info(
        { userId: request.user.id, sessions: deleted.sessionIds.length, erased: deleted.erasedTxHashes.length },
        'account deleted at its owner’s request',
      )
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/account/notifications',
    {
      schema: {
        tags: ['auth'],
        summary: 'The e-mails you asked for',
        security: [{ bearerAuth: [] }],
        response: { 200: NotificationsSchema, 401: ProblemSchema },
      },
    },
    async (request) => {
      const [user] = await rows(database.db, sql`SELECT notify_countersigned FROM users WHERE id = ${request.user.id}`)
      if (!user) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      return { countersigned: user.notify_countersigned === true }
    },
  )

  app.put(
    '/api/account/notifications',
    {
      schema: {
        tags: ['auth'],
        summary: 'Choose the e-mails you get (off unless asked for)',
        description: 'Applies to countersignatures recorded from now on; one already sent is not sent again.',
        security: [{ bearerAuth: [] }],
        body: NotificationsSchema,
        response: { 200: NotificationsSchema, 400: ProblemSchema, 401: ProblemSchema },
      },
    },
    async (request) => {
      const [user] = await rows(
        database.db,
        sql`UPDATE users SET notify_countersigned = ${request.body.countersigned}, updated_at = now()
            WHERE id = ${request.user.id} RETURNING notify_countersigned`,
      )
      if (!user) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      return { countersigned: user.notify_countersigned === true }
    },
  )

  app.get(
    '/api/account/export',
    {
      preHandler: (request) => limitExports(request),
      schema: {
        tags: ['auth'],
        summary: 'Everything the service holds about you, as one JSON document',
        security: [{ bearerAuth: [] }],
        response: { 200: AccountExportSchema, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request, reply) => {
      const exported = await exportAccount(database.db, request.user.id, config)
      if (!exported) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      // Saved as a file by a browser; never kept by a cache on the way.
      reply.header('content-disposition', 'attachment; filename="account-export.json"')
      reply.header('cache-control', 'no-store')
      return exported
    },
  )
}
