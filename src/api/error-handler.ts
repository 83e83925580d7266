// Maps every error a request can end with to an RFC 9457 problem body, without leaking internals.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { hasZodFastifySchemaValidationErrors, isResponseSerializationError } from 'fastify-type-provider-zod'
import { isDatabaseUnavailable } from '../db/database-unavailable.ts'
import { PROBLEM_CONTENT_TYPE, ProblemError, type ProblemFieldError } from './problem.ts'

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const problem = toProblem(error, request)
    if (problem.status >= 500) {
      request.log.error({ err: error }, 'request failed')
    }
    sendProblem(reply, problem)
  })
  // The path is not echoed: the caller knows it, and a reflected URL has no business in someone else's log or page.
  app.setNotFoundHandler((_request, reply) => {
    sendProblem(reply, new ProblemError(404, 'NOT_FOUND', 'No route matches this method and path'))
  })
}

export function sendProblem(reply: FastifyReply, problem: ProblemError): FastifyReply {
  return reply
    .code(problem.status)
    .headers(problem.headers)
    .type(PROBLEM_CONTENT_TYPE)
    .send(JSON.stringify(problem.toBody()))
}

/**
 * A problem body lists at most this many field errors, then says how many more there were: a body with a million
 * unknown keys must not get a million-line answer (issue 38).
 */
export const MAX_FIELD_ERRORS = 20

function toProblem(error: FastifyError, request: FastifyRequest): ProblemError {
  if (error instanceof ProblemError) return error
  if (hasZodFastifySchemaValidationErrors(error)) {
    const context = error.validationContext ?? 'body'
    const fieldPath = (path: string) =>
      context === 'body' ? path || '(body)' : [context, path].filter(Boolean).join('.')
    const errors: ProblemFieldError[] = []
    let total = 0
    for (const issue of error.validation) {
      const path = issue.instancePath.replace(/^\//, '').replaceAll('/', '.')
      // Every route refuses unknown fields (docs/api.md): one error per field, at the field's own path.
      const keys = issue.keyword === 'unrecognized_keys' ? ((issue.params as { keys?: string[] }).keys ?? []) : []
      if (issue.keyword === 'unrecognized_keys') {
        for (const key of keys.slice(0, MAX_FIELD_ERRORS - errors.length)) {
          errors.push({ path: fieldPath([path, key].filter(Boolean).join('.')), message: 'is an unknown field' })
        }
        total += keys.length
        continue
      }
      if (errors.length < MAX_FIELD_ERRORS)
        errors.push({ path: fieldPath(path), message: issue.message ?? 'is invalid' })
      total++
    }
    const extensions = total > errors.length ? { errors, moreErrors: total - errors.length } : { errors }
    return new ProblemError(400, 'VALIDATION_FAILED', `The request ${context} is invalid`, { extensions })
  }
  if (isResponseSerializationError(error)) {
    return new ProblemError(500, 'INTERNAL_ERROR', 'The server could not complete the request', { cause: error })
  }
  switch (error.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ProblemError(413, 'PAYLOAD_TOO_LARGE', 'The request body exceeds the limit for this route')
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ProblemError(415, 'UNSUPPORTED_MEDIA_TYPE', 'Send the request body as application/json')
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ProblemError(400, 'MALFORMED_REQUEST', 'The JSON request body is empty')
  }
  const status = error.statusCode ?? 500
  if (status === 400 && error instanceof SyntaxError) {
    return new ProblemError(400, 'MALFORMED_REQUEST', 'The request body is not valid JSON')
  }
  if (status >= 400 && status < 500) {
    // Fastify's own client errors (bad content length, bad URL, ...): their messages describe the request only.
    return new ProblemError(status, status === 404 ? 'NOT_FOUND' : 'MALFORMED_REQUEST', error.message)
  }
  if (isDatabaseUnavailable(error)) {
    // A restart or failover of PostgreSQL passes in seconds: tell the client to retry rather than report a fault.
    return new ProblemError(503, 'NOT_READY', 'The database is briefly unavailable; try again shortly', {
      headers: { 'retry-after': '1' },
      cause: error,
    })
  }
  request.log.debug({ code: error.code }, 'unexpected error')
  return new ProblemError(500, 'INTERNAL_ERROR', 'The server could not complete the request', { cause: error })
}
