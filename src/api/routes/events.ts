// GET /api/events: the caller's events, oldest first after a cursor (src/events/event-feed.ts), for clients that
// cannot receive webhooks (the desktop app, `anchor events --follow`).
import { z } from 'zod'
import { EVENT_TYPES } from '../../db/schema.ts'
import { EVENT_PAGE_DEFAULT, EVENT_PAGE_MAX, eventCursorPosition, eventsAfter } from '../../events/event-feed.ts'
import type { AppInstance } from '../app-types.ts'
import { ProblemSchema } from '../problem.ts'

const MINUTE_MS = 60_000

const QuerySchema = z.strictObject({
  after: z
    .string()
    .max(20)
    .transform((text, ctx) => {
      // `?after=` (empty) is the start of the feed, as no cursor at all.
      if (text === '') return 0
      const position = eventCursorPosition(text)
      if (position === undefined) {
        ctx.addIssue({ code: 'custom', message: 'not a cursor this service gave: start again without one' })
      }
      return position ?? z.NEVER
    })
    .optional()
    .describe("The previous page's nextCursor; the first event when absent"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(EVENT_PAGE_MAX)
    .default(EVENT_PAGE_DEFAULT)
    .describe(`Events in a page, 1 to ${EVENT_PAGE_MAX}`),
})

const HASH = z.string().describe('0x and 64 hex digits, lower-case')

export const AnchorEventDataSchema = z.object({
  txHash: HASH,
  compositeHash: HASH,
  previousTxHash: HASH,
  chainId: z.number().int(),
  contractAddress: z.string(),
  blockNumber: z.number().int().nullable(),
  blockHash: z.string().nullable(),
  logIndex: z.number().int().nullable(),
  countersignature: z
    .object({ txHash: HASH, compositeHash: HASH, blockNumber: z.number().int().nullable() })
    .optional()
    .describe('anchor.countersigned: the anchor that signed after the account’s own, which the other fields name'),
})

/** webhook.test: the webhook it was sent to. */
const TestEventDataSchema = z.object({ webhookId: z.string() })

export const EventSchema = z.object({
  id: z.string().describe('evt_ and 32 hex digits; the webhook-id of its deliveries'),
  type: z.enum(EVENT_TYPES),
  timestamp: z.string().describe('ISO 8601: when the change was recorded'),
  data: z.union([AnchorEventDataSchema, TestEventDataSchema]),
})

const PageSchema = z.object({
  events: z.array(EventSchema),
  nextCursor: z.string().describe('Where the next page starts: ask again with it, now or later, for what came since'),
})

export async function eventRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  app.addHook('onRequest', app.authenticate)
  // A page is one indexed read; a follower polls every few seconds, far under this.
  const limitPerUser = app.limiter({
    name: 'events',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'event feed requests',
    key: (request) => request.user.id,
  })

  app.get(
    '/api/events',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        tags: ['events'],
        summary: "The caller's events, oldest first after a cursor",
        security: [{ bearerAuth: [] }],
        querystring: QuerySchema,
        response: { 200: PageSchema, 400: ProblemSchema, 401: ProblemSchema, 429: ProblemSchema },
      },
    },
    async (request) => {
      const { after, limit } = request.query
      const page = await eventsAfter(database.db, request.user.id, after ?? 0, limit)
      return {
        events: page.events.map((event) => ({
          ...event,
          timestamp: event.timestamp.toISOString(),
          data: event.data as z.infer<typeof EventSchema>['data'],
        })),
        nextCursor: page.next,
      }
    },
  )
}
