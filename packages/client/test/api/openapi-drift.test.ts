// Types that cannot drift: every request body the client sends and every answer it parses is compared, field by
// field (names, optionality, JSON types, enums, nesting), with the service's own /openapi.json. A route the client
// calls that changes shape on the server fails here.

import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { createTestApp, type TestApp } from '../../../../test/helpers/app.ts'
import * as schemas from '../../src/api/api-schemas.ts'

type JsonSchema = Record<string, unknown>
type Shape = string | Shape[] | { [field: string]: Shape }

/** The part of a JSON Schema a client depends on: field names, optionality, JSON types, enums and nesting. */
function shape(schema: JsonSchema): Shape {
  const members = unionMembers(schema)
  if (members.length > 1) {
    return members
      .map((member) => JSON.stringify(shape(member)))
      .sort()
      .join(' | ')
  }
  const single = members[0]!
  if ('const' in single) return `enum ${JSON.stringify([single.const])}`
  if (Array.isArray(single.enum)) return `enum ${JSON.stringify([...single.enum].sort())}`
  if (single.type === 'array') return [shape(single.items as JsonSchema)]
  if (single.type === 'object' || single.properties) {
    const required = new Set((single.required as string[] | undefined) ?? [])
    const properties = (single.properties ?? {}) as Record<string, JsonSchema>
    return Object.fromEntries(
      Object.entries(properties)
        .map(([name, property]) => [required.has(name) ? name : `${name}?`, shape(property)] as const)
        .sort(([a], [b]) => a.localeCompare(b)),
    )
  }
  return String(single.type)
}

/** `anyOf` members and `type: [a, b]` spelled out as separate schemas. */
function unionMembers(schema: JsonSchema): JsonSchema[] {
  if (Array.isArray(schema.anyOf)) return (schema.anyOf as JsonSchema[]).flatMap(unionMembers)
  if (Array.isArray(schema.type)) return (schema.type as string[]).map((type) => ({ ...schema, type }))
  return [schema]
}

/**
 * The server's schema as the client reads it on purpose: an event's `type` as any string and its `data` as an open
 * object, so that a client older than a new event type still reads the feed and its webhooks (a tolerant reader).
 */
function asEventTolerantReader(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema), (key, value) => {
    if (Array.isArray(value?.enum) && value.enum.includes('webhook.test')) return { type: 'string' }
    if (key === 'data' && Array.isArray(value?.anyOf)) return { type: 'object' }
    return value
  })
}

const clientShape = (schema: z.ZodType) => shape(z.toJSONSchema(schema, { io: 'input' }) as JsonSchema)

type Method = 'get' | 'post' | 'put' | 'delete'

/** Every answer the client parses: method, OpenAPI path, status, the client's schema. */
const RESPONSES: [Method, string, string, z.ZodType][] = [
  ['post', '/api/auth/magic-link', '202', schemas.CodeSentSchema],
  ['post', '/api/auth/magic-link/verify', '200', schemas.SignInSchema],
  ['post', '/api/auth/exchange', '200', schemas.SignInSchema],
  ['get', '/api/auth/me', '200', schemas.MeSchema],
  ['get', '/api/info', '200', schemas.InfoSchema],
  ['post', '/api/relay', '200', schemas.RelaySchema],
  ['post', '/api/relay', '201', schemas.RelaySchema],
  ['post', '/api/relay', '202', schemas.RelaySchema],
  ['get', '/api/anchors/{compositeHash}', '200', schemas.AnchorStateSchema],
  ['get', '/api/anchors', '200', schemas.AnchorPageSchema],
  ['get', '/api/account/export', '200', schemas.AccountExportSchema],
  ['get', '/api/verify/{txHash}', '200', schemas.VerifySchema],
  ['get', '/api/library', '200', schemas.LibrarySchema],
  ['put', '/api/library/sync', '200', schemas.LibrarySyncResultSchema],
  ['get', '/api/library/exists', '200', schemas.LibraryStatusSchema],
  ['post', '/api/signer-certificates', '201', schemas.SignerCertificateSchema],
  ['post', '/api/pdf-signatures', '201', schemas.PdfSignatureSchema],
  ['post', '/api/document-timestamps', '200', schemas.DocumentTimestampSchema],
  ['get', '/api/events', '200', schemas.EventPageSchema],
  ['post', '/api/webhooks', '201', schemas.CreatedWebhookSchema],
  ['get', '/api/webhooks', '200', z.object({ webhooks: z.array(schemas.WebhookSchema) })],
  ['get', '/api/webhooks/{id}/attempts', '200', schemas.WebhookAttemptPageSchema],
  ['get', '/api/account/notifications', '200', schemas.NotificationsSchema],
  ['put', '/api/account/notifications', '200', schemas.NotificationsSchema],
]

/** Every body the client sends. */
const REQUESTS: [Method, string, z.ZodType][] = [
  ['post', '/api/auth/magic-link', schemas.RequestCodeBodySchema],
  ['post', '/api/auth/magic-link/verify', schemas.VerifyCodeBodySchema],
  ['post', '/api/auth/exchange', schemas.ExchangeBodySchema],
  ['post', '/api/relay', schemas.RelayBodySchema],
  ['put', '/api/library/sync', schemas.LibrarySyncBodySchema],
  ['put', '/api/account/notifications', schemas.NotificationsSchema],
]

/** Routes the client calls whose success has no body. */
const NO_CONTENT: [Method, string][] = [
  ['post', '/api/auth/logout'],
  ['delete', '/api/library'],
  ['delete', '/api/webhooks/{id}'],
]

describe('the client types against /openapi.json', () => {
  let t: TestApp
  let paths: Record<string, Record<string, Record<string, JsonSchema>>>

  beforeAll(async () => {
    t = await createTestApp()
    paths = (await t.app.inject({ method: 'GET', url: '/openapi.json' })).json().paths
  })
  afterAll(async () => t?.close())

  const operation = (method: Method, path: string) => {
    const found = paths[path]?.[method]
    expect(found, `${method.toUpperCase()} ${path} is in /openapi.json`).toBeDefined()
    return found!
  }
  const jsonSchema = (content: unknown) =>
    (content as { content: Record<string, { schema: JsonSchema }> }).content['application/json']!.schema

  it.each(RESPONSES)('%s %s answers %s with the shape the client parses', (method, path, status, schema) => {
    const response = (operation(method, path).responses as Record<string, unknown>)[status]
    expect(response, `${method} ${path} documents ${status}`).toBeDefined()
    expect(clientShape(schema)).toEqual(shape(asEventTolerantReader(jsonSchema(response))))
  })

  it.each(REQUESTS)('%s %s takes the body the client sends', (method, path, schema) => {
    expect(clientShape(schema)).toEqual(shape(jsonSchema(operation(method, path).requestBody)))
  })

  it.each(NO_CONTENT)('%s %s answers 204', (method, path) => {
    expect(Object.keys(operation(method, path).responses as object)).toContain('204')
  })

  it('notices a changed shape', () => {
    const changed = schemas.InfoSchema.extend({ chainId: z.string() })
    const response = (operation('get', '/api/info').responses as Record<string, unknown>)['200']
    expect(clientShape(changed)).not.toEqual(shape(jsonSchema(response)))
  })
})
