// The caller's own account: GET /api/account/export, everything the service holds about them as one JSON document
// (src/accounts/account-export.ts), as data-protection law gives them the right to take with them.
import { z } from 'zod'
import { exportAccount } from '../../accounts/account-export.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

const HOUR_MS = 3_600_000
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

export const AccountExportSchema = z.object({
  exportedAt: Timestamp,
  account: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    authProvider: z.string(),
    plan: z.string(),
    createdAt: Timestamp,
    usage: z.object({ period: z.string(), used: z.number().int(), limit: z.number().int() }),
  }),
  sessions: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      createdAt: Timestamp,
      expiresAt: Timestamp,
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
      encryptedPayload: z.string(),
      attestation: z.object({ trust: z.string(), verified: z.boolean(), identityCommitment: z.string() }).nullable(),
      pdfSignature: z
        .object({ digest: z.string(), timestampTime: Timestamp, timestampAuthority: z.string() })
        .nullable(),
      createdAt: Timestamp,
      confirmedAt: Timestamp.nullable(),
    }),
  ),
  library: z.object({
    signatures: z.array(z.union([LibraryItem.extend({ base64Png: z.string() }), LibraryMarker])),
    snippets: z.array(z.union([LibraryItem.extend({ text: z.string(), fontSize: z.number() }), LibraryMarker])),
  }),
})

export async function accountRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  app.addHook('onRequest', app.authenticate)
  const limitExports = app.limiter({
    name: 'account-export',
    max: EXPORTS_PER_HOUR,
    timeWindowMs: HOUR_MS,
    what: 'account exports',
    key: (request) => request.user.id,
  })

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
      const limitOf = (plan: string) => config.plans[plan] ?? config.plans[config.defaultPlan] ?? 0
      const exported = await exportAccount(database.db, request.user.id, limitOf)
      if (!exported) throw new ProblemError(401, 'UNAUTHENTICATED', 'The account no longer exists')
      // Saved as a file by a browser; never kept by a cache on the way.
      reply.header('content-disposition', 'attachment; filename="account-export.json"')
      reply.header('cache-control', 'no-store')
      return exported
    },
  )
}
