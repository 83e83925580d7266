// The caller's webhook endpoints (docs/api.md, "Webhooks"), and the public keys their `v1a` signatures verify under.
import { z } from 'zod'
import { EVENT_TYPES } from '../../db/schema.ts'
import { WebhookUrlRefusedError } from '../../events/errors.ts'
import { currentSigningKey, publishedKeys } from '../../events/signing-keys.ts'
import { urlRefusal } from '../../events/webhook-request.ts'
import {
  ATTEMPT_PAGE_MAX,
  attemptsOf,
  createWebhook,
  deleteWebhook,
  findWebhook,
  listWebhooks,
  queueTestEvent,
  replayDeliveries,
  rotateSecret,
  updateWebhook,
  type Webhook,
} from '../../events/webhooks.ts'
import type { AppInstance } from '../app-types.ts'
import { domainProblem } from '../domain-problems.ts'
import { ProblemError, ProblemSchema } from '../problem.ts'

const MINUTE_MS = 60_000
const URL_CHARACTERS = 2_048
const DESCRIPTION_CHARACTERS = 200

const Url = z.string().min(1).max(URL_CHARACTERS).describe('Where events are POSTed: https in production')
const EventTypes = z
  .array(z.enum(EVENT_TYPES))
  .min(1)
  .max(EVENT_TYPES.length)
  .describe('The event types it receives; every type when absent')
const Description = z.string().max(DESCRIPTION_CHARACTERS)

const WebhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.enum(EVENT_TYPES)).nullable(),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  disabledReason: z.enum(['owner', 'gone', 'failing']).nullable(),
  createdAt: z.string(),
})
const IdParams = z.strictObject({ id: z.uuid() })
const Created = WebhookSchema.extend({ secret: z.string().describe('whsec_…: shown only here and on rotation') })
const AttemptsQuery = z.strictObject({
  cursor: z
    .string()
    .regex(/^[1-9]\d{0,17}$/, 'not a cursor this service gave')
    .optional(),
  limit: z.coerce.number().int().min(1).max(ATTEMPT_PAGE_MAX).default(50),
})
const Replay = z.union([z.strictObject({ eventId: z.string().max(40) }), z.strictObject({ since: z.iso.datetime() })])

function shown(webhook: Webhook) {
  return { ...webhook, createdAt: webhook.createdAt.toISOString() }
}

export async function webhookKeyRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  // Public, and a database read: limited per address like a verification.
  const limitPerIp = app.limiter({
    name: 'webhook-keys',
    max: config.limits.verifyPerIpPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'webhook key requests',
  })
  app.get(
    '/.well-known/webhook-keys',
    {
      preHandler: (request) => limitPerIp(request),
      schema: {
        tags: ['events'],
        summary: 'The public keys the v1a signatures of deliveries verify under',
        response: {
          200: z.object({
            keys: z.array(
              z.object({
                kid: z.string(),
                alg: z.literal('Ed25519'),
                publicKey: z.string(),
                notBefore: z.string(),
                notAfter: z.string().nullable(),
              }),
            ),
          }),
        },
      },
    },
    async (_request, reply) => {
      reply.header('cache-control', 'public, max-age=300')
      // Made now if no delivery has made it yet: an empty list, cached for 5 minutes, would fail every v1a meanwhile.
      await currentSigningKey(database.db)
      const keys = await publishedKeys(database.db)
      return {
        keys: keys.map((key) => ({
          ...key,
          notBefore: key.notBefore.toISOString(),
          notAfter: key.notAfter?.toISOString() ?? null,
        })),
      }
    },
  )
}

export async function webhookRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  const db = database.db
  app.addHook('onRequest', app.authenticate)
  const limitPerUser = app.limiter({
    name: 'webhooks',
    max: config.limits.relayPerUserPerMinute,
    timeWindowMs: MINUTE_MS,
    what: 'webhook requests',
    key: (request) => request.user.id,
  })
  const common = { tags: ['events'], security: [{ bearerAuth: [] }] }
  const refusals = { 400: ProblemSchema, 401: ProblemSchema, 404: ProblemSchema, 429: ProblemSchema }
  const notFound = () => new ProblemError(404, 'NOT_FOUND', 'No such webhook')
  const checkUrl = (url: string) => {
    const refusal = urlRefusal(url, config.webhooks)
    if (refusal) throw domainProblem(new WebhookUrlRefusedError(refusal))!.problem
  }

  app.post(
    '/api/webhooks',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'Registers a webhook endpoint; its secret is shown only in this answer',
        body: z.strictObject({ url: Url, events: EventTypes.optional(), description: Description.optional() }),
        response: { 201: Created, 409: ProblemSchema, ...refusals },
      },
    },
    async (request, reply) => {
      checkUrl(request.body.url)
      const created = await createWebhook(db, request.user.id, request.body).catch((error: unknown) => {
        throw domainProblem(error)?.problem ?? error
      })
      reply.code(201)
      return { ...shown(created.webhook), secret: created.secret }
    },
  )

  app.get(
    '/api/webhooks',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: "The caller's webhooks",
        response: { 200: z.object({ webhooks: z.array(WebhookSchema) }), ...refusals },
      },
    },
    async (request) => ({ webhooks: (await listWebhooks(db, request.user.id)).map(shown) }),
  )

  app.get(
    '/api/webhooks/:id',
    {
      preHandler: (request) => limitPerUser(request),
      schema: { ...common, summary: 'One webhook', params: IdParams, response: { 200: WebhookSchema, ...refusals } },
    },
    async (request) => {
      const webhook = await findWebhook(db, request.user.id, request.params.id)
      if (!webhook) throw notFound()
      return shown(webhook)
    },
  )

  app.patch(
    '/api/webhooks/:id',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'Changes a webhook; enabling it again clears its failures',
        params: IdParams,
        body: z.strictObject({
          url: Url.optional(),
          events: EventTypes.nullable().optional(),
          description: Description.nullable().optional(),
          status: z.enum(['enabled', 'disabled']).optional(),
        }),
        response: { 200: WebhookSchema, ...refusals },
      },
    },
    async (request) => {
      if (request.body.url !== undefined) checkUrl(request.body.url)
      const webhook = await updateWebhook(db, request.user.id, request.params.id, request.body)
      if (!webhook) throw notFound()
      return shown(webhook)
    },
  )

  app.delete(
    '/api/webhooks/:id',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'Deletes a webhook and its deliveries',
        params: IdParams,
        response: { 204: z.null(), ...refusals },
      },
    },
    async (request, reply) => {
      if (!(await deleteWebhook(db, request.user.id, request.params.id))) throw notFound()
      return reply.code(204).send(null)
    },
  )

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'A new secret; the previous one keeps signing for 24 hours',
        params: IdParams,
        response: { 200: z.object({ secret: z.string() }), ...refusals },
      },
    },
    async (request) => {
      const secret = await rotateSecret(db, request.user.id, request.params.id)
      if (!secret) throw notFound()
      return { secret }
    },
  )

  app.post(
    '/api/webhooks/:id/test',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'Delivers a webhook.test event to this webhook',
        params: IdParams,
        response: { 202: z.object({ queued: z.literal(true) }), ...refusals },
      },
    },
    async (request, reply) => {
      if (!(await queueTestEvent(db, request.user.id, request.params.id))) throw notFound()
      reply.code(202)
      return { queued: true as const }
    },
  )

  app.get(
    '/api/webhooks/:id/attempts',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: "The webhook's delivery attempts, newest first",
        params: IdParams,
        querystring: AttemptsQuery,
        response: {
          200: z.object({
            attempts: z.array(
              z.object({
                eventId: z.string(),
                type: z.string(),
                attempt: z.number().int(),
                at: z.string(),
                status: z.string().describe('The HTTP status, or timeout, refused or error'),
                durationMs: z.number().int(),
                response: z.string().describe('A capped prefix of the answer'),
              }),
            ),
            nextCursor: z.string().nullable(),
          }),
          ...refusals,
        },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query
      const attempts = await attemptsOf(
        db,
        request.user.id,
        request.params.id,
        cursor === undefined ? undefined : Number(cursor),
        limit,
      )
      if (!attempts) throw notFound()
      const last = attempts.length === limit ? attempts.at(-1) : undefined
      return {
        attempts: attempts.map(({ id: _id, at, ...attempt }) => ({ ...attempt, at: at.toISOString() })),
        nextCursor: last ? String(last.id) : null,
      }
    },
  )

  app.post(
    '/api/webhooks/:id/replay',
    {
      preHandler: (request) => limitPerUser(request),
      schema: {
        ...common,
        summary: 'Delivers again failed deliveries: one event, or every one since a time',
        params: IdParams,
        body: Replay,
        response: { 202: z.object({ queued: z.number().int() }), ...refusals },
      },
    },
    async (request, reply) => {
      const body = request.body
      const which = 'eventId' in body ? { eventId: body.eventId } : { since: new Date(body.since) }
      const queued = await replayDeliveries(db, request.user.id, request.params.id, which)
      if (queued === undefined) throw notFound()
      reply.code(202)
      return { queued }
    },
  )
}
