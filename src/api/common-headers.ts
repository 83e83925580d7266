// The headers every answer of the service carries: `nosniff`, HSTS when configured, and CORS (cors.ts). Set by the
// app's one onRequest hook, and by the answers Node's server gives by itself (framework-errors.ts), from this one place.
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { AnswerHeaders } from './cors.ts'

export function commonHeaders(hstsMaxAgeSeconds: number, cors: AnswerHeaders): AnswerHeaders {
  return {
    always: {
      'x-content-type-options': 'nosniff',
      ...(hstsMaxAgeSeconds > 0 && {
        'strict-transport-security': `max-age=${hstsMaxAgeSeconds}; includeSubDomains`,
      }),
      ...cors.always,
    },
    allowOrigin: cors.allowOrigin,
  }
}

/** Sets `headers` on a reply of Fastify's, the allowed origin echoed from the request's `Origin`. */
export function setAnswerHeaders(headers: AnswerHeaders, request: FastifyRequest, reply: FastifyReply): void {
  reply.headers(headers.always)
  const allowOrigin = headers.allowOrigin(request.headers.origin)
  if (allowOrigin !== undefined) reply.header('access-control-allow-origin', allowOrigin)
}
