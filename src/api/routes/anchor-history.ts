// GET /api/anchors: the caller's own anchors, newest first, a page at a time (src/accounts/anchor-history.ts).
import { z } from 'zod'
import {
  anchorHistory,
  decodeCursor,
  encodeCursor,
  HISTORY_PAGE_DEFAULT,
  HISTORY_PAGE_MAX,
} from '../../accounts/anchor-history.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemSchema } from '../problem.ts'
import { AnchorResponseSchema } from './relay.ts'

const MINUTE_MS = 60_000

const QuerySchema = z.strictObject({
  cursor: z
    .string()
    .max(200)
    .transform((text, ctx) => {
      // `?cursor=` (empty) is the first page, as no cursor at all.
      if (text === '') return undefined
      const cursor = decodeCursor(text)
      if (!cursor) ctx.addIssue({ code: 'custom', message: 'not a cursor this service gave: start again without one' })
      return cursor ?? z.NEVER
    })
    .optional()
    .describe("The previous page's nextCursor"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(HISTORY_PAGE_MAX)
    .default(HISTORY_PAGE_DEFAULT)
    .describe(`Anchors in a page, 1 to ${HISTORY_PAGE_MAX}`),
})

const PageSchema = z.object({
  anchors: z.array(AnchorResponseSchema),
  nextCursor: z.string().nullable().describe('Where the next page starts; null on the last page'),
})

export async function anchorHistoryRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  app.addHook('onRequest', app.authenticate)
  // A page is one indexed read; the limit is there so that no client walks its history in a tight loop.
  const limitPerUser = app.limiter({
    name: 'anchor-history',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'history requests',
    key: (request) => request.user.id,
  })

  app.get(
    '/api/anchors',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        tags: ['relay'],
        summary: "The caller's anchors, newest first",
        security: [{ bearerAuth: [] }],
        querystring: QuerySchema,
        response: { 200: PageSchema, 400: ProblemSchema, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query
      const page = await anchorHistory(database.db, request.user.id, { limit, after: cursor })
      return {
        anchors: page.entries.map((entry) => ({ ...entry, createdAt: entry.createdAt.toISOString() })),
        nextCursor: page.next ? encodeCursor(page.next) : null,
      }
    },
  )
}
