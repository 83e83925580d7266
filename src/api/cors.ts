// CORS for the verification page and any other browser client, answered from headers computed once. @fastify/cors
// answers the same, but rebuilt its options object and read the route's options on every request, a cost every
// cached verification paid (bench/verify-hooks.ts). The rules are the Fetch standard's: an allowed Origin is echoed
// back (`*` when every origin is allowed), `Vary: Origin` tells caches that the answer depends on it, and a preflight
// is answered 204 with the methods and headers allowed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'

export interface CorsPolicy {
  /** The origins allowed to read answers, or '*' for any. */
  origins: readonly string[] | '*'
  methods: readonly string[]
  allowedHeaders: readonly string[]
  /** Answer headers a page's script may read beyond the CORS-safelisted ones. */
  exposedHeaders: readonly string[]
  maxAgeSeconds: number
}

/** The service's policy: `CORS_ORIGINS` (the verification page's origin by default), the API's methods and headers. */
export function servicePolicy(corsOrigins: readonly string[]): CorsPolicy {
  return {
    origins: corsOrigins.includes('*') ? '*' : corsOrigins,
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'DELETE'],
    allowedHeaders: ['authorization', 'content-type', 'if-none-match'],
    exposedHeaders: ['etag', 'retry-after'],
    maxAgeSeconds: 600,
  }
}

/** Headers for every answer: the same for every request but for the allowed origin, which echoes the request's. */
export interface AnswerHeaders {
  /** Carried by every answer. */
  readonly always: Readonly<Record<string, string>>
  /** `Access-Control-Allow-Origin` for a request with this `Origin`; undefined when that origin may not read answers. */
  allowOrigin(origin: string | undefined): string | undefined
}

/**
 * Adds the preflight route and returns the headers every other answer carries, for the caller's own `onRequest` hook
 * (the app runs one hook for all its per-request headers: each hook costs every request a turn of Fastify's hook
 * runner).
 */
export function registerCors(
  app: FastifyInstance,
  policy: CorsPolicy,
  /** Paths (prefixes) of the routes whose answers every origin may read (publicAnswerHeaders): so may their preflights. */
  publicPrefixes: readonly string[],
): AnswerHeaders {
  const anyOrigin = policy.origins === '*'
  const allowed = new Set(policy.origins)
  const preflightHeaders = {
    'access-control-allow-methods': policy.methods.join(', '),
    'access-control-allow-headers': policy.allowedHeaders.join(', '),
    'access-control-max-age': String(policy.maxAgeSeconds),
  }
  const exposed = { 'access-control-expose-headers': policy.exposedHeaders.join(', ') }
  const corsHeaders: AnswerHeaders = {
    always: anyOrigin ? { 'access-control-allow-origin': '*', ...exposed } : { vary: 'Origin', ...exposed },
    allowOrigin: (origin) => (!anyOrigin && origin !== undefined && allowed.has(origin) ? origin : undefined),
  }
  // Every OPTIONS request is a preflight (no route answers OPTIONS for itself), answered by this route: only the
  // app-wide hooks run before it, never a route's authentication, since a browser sends a preflight without credentials.
  app.options('*', { schema: { hide: true } }, (request, reply) => {
    if (request.headers.origin === undefined || request.headers['access-control-request-method'] === undefined) {
      reply.code(400).type('text/plain').send('Invalid Preflight Request')
      return
    }
    // A page of another origin may read a public answer with `If-None-Match`, which its browser asks about first.
    if (publicPrefixes.some((prefix) => request.url.startsWith(prefix))) {
      reply.removeHeader('vary').header('access-control-allow-origin', '*')
    }
    // Safari waits for a body unless the 204 says it has none.
    reply.code(204).headers(preflightHeaders).header('content-length', '0').send()
  })
  return corsHeaders
}

/**
 * A route's onRequest hook for answers anyone may read without credentials (a public verification): every origin may
 * read them, so they say `*` and do not vary by Origin, and a shared cache in front of the fleet (HAProxy's, which
 * keeps no answer that varies on Origin) holds one copy for every client. It replaces what the app's hook set from the
 * configured policy, for every answer of the route, refusals included. Never for a route that reads credentials:
 * browsers send none with a `*` answer, and a cache would serve one client's answer to all.
 */
export function publicAnswerHeaders(_request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  reply.removeHeader('vary').header('access-control-allow-origin', '*')
  done()
}
