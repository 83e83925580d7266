// The opt-in cloud library: read, last-write-wins sync, delete all, and the new-device check (../shared/API.md).
import { z } from 'zod'
import type { LibraryLimits } from '../../config/library-settings.ts'
import { createLibraryMetrics } from '../../library/library-metrics.ts'
import {
  deleteLibrary,
  libraryResponseJson,
  readLibraryJson,
  readLibraryStatus,
  syncLibrary,
} from '../../library/library-store.ts'
import {
  checkBase64Png,
  checkText,
  FONT_SIZE_MAX,
  FONT_SIZE_MIN,
  LABEL_MAX_CHARACTERS,
  parseClientTimestamp,
  SNIPPET_TEXT_MAX_CHARACTERS,
} from '../../library/validation.ts'
import type { AppInstance } from '../app-types.ts'
import { boundedJsonBodies } from '../bounded-json-body.ts'
import { domainProblem } from '../domain-problems.ts'
import { ProblemSchema } from '../problem.ts'

const JSON_TYPE = 'application/json; charset=utf-8'

const Uuid = z
  .uuid()
  .transform((id) => id.toLowerCase())
  .describe('client-generated UUID; answered in lower case')

function textField(maxCharacters: number) {
  return z.string().superRefine((value, ctx) => {
    const message = checkText(value, maxCharacters)
    if (message !== undefined) ctx.addIssue({ code: 'custom', message })
  })
}

/** Item schemas of requests, which check client timestamps against the server's clock at validation time. */
export function librarySchemas(limits: LibraryLimits) {
  const timestamp = z
    .string()
    .superRefine((value, ctx) => {
      const result = parseClientTimestamp(value, Date.now(), limits.clockSkewMs)
      if (typeof result === 'string') ctx.addIssue({ code: 'custom', message: result })
    })
    .describe('ISO 8601 UTC with milliseconds, at most the configured clock skew ahead of the server')
  const base64Png = z
    .string()
    .superRefine((value, ctx) => {
      const message = checkBase64Png(value, limits.maxPngBytes)
      if (message !== undefined) ctx.addIssue({ code: 'custom', message })
    })
    .describe(`standard padded base64 of a PNG of at most ${limits.maxPngBytes} bytes`)
  const label = textField(LABEL_MAX_CHARACTERS)
  const signature = z.strictObject({ id: Uuid, label, base64Png, updatedAt: timestamp, createdAt: timestamp })
  const snippet = z.strictObject({
    id: Uuid,
    label,
    text: textField(SNIPPET_TEXT_MAX_CHARACTERS),
    fontSize: z.number().min(FONT_SIZE_MIN).max(FONT_SIZE_MAX),
    updatedAt: timestamp,
    createdAt: timestamp,
  })
  const deletion = z.strictObject({ id: Uuid, deletedAt: timestamp })
  const deletions = z.array(deletion).max(limits.maxTombstones).optional()
  // Unknown keys are refused at every level, as on every route: a misspelt `signature` must not turn a sync into a
  // silent no-op.
  const body = z.strictObject({
    signatures: z
      .strictObject({ upsert: z.array(signature).max(limits.maxSignatures).optional(), delete: deletions })
      .optional(),
    snippets: z
      .strictObject({ upsert: z.array(snippet).max(limits.maxSnippets).optional(), delete: deletions })
      .optional(),
  })
  return { body }
}

/** Items as answered (the server's copy, already valid). */
const SignatureOut = z.object({
  id: z.string(),
  label: z.string(),
  base64Png: z.string(),
  updatedAt: z.string(),
  createdAt: z.string(),
})
const SnippetOut = z.object({
  id: z.string(),
  label: z.string(),
  text: z.string(),
  fontSize: z.number(),
  updatedAt: z.string(),
  createdAt: z.string(),
})
export const LibraryResponseSchema = z.object({ signatures: z.array(SignatureOut), snippets: z.array(SnippetOut) })
export const SyncResponseSchema = LibraryResponseSchema.extend({
  skipped: z.array(
    z.object({
      kind: z.enum(['signature', 'snippet']),
      id: z.string(),
      op: z.enum(['upsert', 'delete']),
      reason: z.literal('stale'),
    }),
  ),
})
const StatusSchema = z.object({
  exists: z.boolean(),
  signatures: z.number().int(),
  snippets: z.number().int(),
  updatedAt: z.string().nullable(),
})

export async function libraryRoutes(app: AppInstance): Promise<void> {
  const { config, database, metrics } = app.deps
  const libraryMetrics = createLibraryMetrics(metrics.registry)
  const limits = config.library
  const { body } = librarySchemas(limits)
  const security = [{ bearerAuth: [] }]
  // The token is checked on request, before a body of up to 16 MiB is read, parsed and validated for anyone.
  app.addHook('onRequest', app.authenticate)
  // A sync's body is scanned as it arrives and refused as soon as it could be no library: deeper than a sync nests
  // (body, kind, list, item: 4, with room for a misplaced level zod then names), or with more members and elements
  // than the largest sync the limits allow (every list full, each item with all its fields).
  boundedJsonBodies(app, {
    maxBytes: config.limits.libraryBodyBytes,
    maxDepth: 6,
    maxValues: 8 + 6 * limits.maxSignatures + 7 * limits.maxSnippets + 2 * 3 * limits.maxTombstones,
  })
  const limitSyncs = app.limiter({
    name: 'library-sync',
    max: limits.syncsPerUserPerMinute,
    timeWindowMs: 60_000,
    what: 'library syncs',
    key: (request) => request.user.id,
  })

  // The library JSON is built by PostgreSQL and sent as text: the response schemas document it for OpenAPI, and
  // the tests check answers against them, but they are not run on every large response.
  app.get(
    '/api/library',
    {
      schema: { tags: ['library'], security, response: { 200: LibraryResponseSchema, 401: ProblemSchema } },
    },
    async (request, reply) => {
      const library = await readLibraryJson(database.db, request.user.id)
      return reply.type(JSON_TYPE).send(libraryResponseJson(library) as never)
    },
  )

  app.put(
    '/api/library/sync',
    {
      // Counted before the body is read: a flood of syncs costs the instance no parsing.
      onRequest: limitSyncs.onRequest,
      bodyLimit: config.limits.libraryBodyBytes,
      schema: {
        tags: ['library'],
        security,
        body,
        response: {
          200: SyncResponseSchema,
          400: ProblemSchema,
          401: ProblemSchema,
          409: ProblemSchema,
          413: ProblemSchema,
          429: ProblemSchema,
        },
      },
    },
    async (request, reply) => {
      try {
        const { library, skipped } = await syncLibrary(database.db, request.user.id, request.body, limits)
        libraryMetrics.countSync(request.body, skipped)
        return reply.type(JSON_TYPE).send(libraryResponseJson(library, { skipped }) as never)
      } catch (error) {
        throw domainProblem(error)?.problem ?? error
      }
    },
  )

  app.delete(
    '/api/library',
    {
      schema: { tags: ['library'], security, response: { 204: z.null(), 401: ProblemSchema } },
    },
    async (request, reply) => {
      await deleteLibrary(database.db, request.user.id)
      return reply.code(204).send(null)
    },
  )

  app.get(
    '/api/library/exists',
    {
      schema: { tags: ['library'], security, response: { 200: StatusSchema, 401: ProblemSchema } },
    },
    async (request) => readLibraryStatus(database.db, request.user.id),
  )
}
