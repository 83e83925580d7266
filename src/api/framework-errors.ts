// Errors raised before a request reaches a route, by Fastify's router or Node's HTTP parser, as problem bodies too.
// None of them echoes the request: a URL or a header can carry a token, and the answer may land in someone's logs.
import { STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import { sendProblem } from './error-handler.ts'
import { PROBLEM_CONTENT_TYPE, ProblemError } from './problem.ts'

/** Fastify's `frameworkErrors` option: a bad percent escape or an over-long path parameter. */
export function frameworkErrors(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const problem =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? new ProblemError(414, 'URI_TOO_LONG', 'A path segment of the request exceeds the length limit')
      : error.code === 'FST_ERR_BAD_URL'
        ? new ProblemError(400, 'MALFORMED_REQUEST', 'The request path is not a valid URL')
        : new ProblemError(500, 'INTERNAL_ERROR', 'The server could not complete the request')
  sendProblem(reply, problem)
}

/** Fastify's `clientErrorHandler` option: Node could not parse the request, so the socket gets a raw answer. */
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem = clientProblem(error.code)
  if (socket.writable) {
    const body = JSON.stringify(problem.toBody())
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

function clientProblem(code: string | undefined): ProblemError {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return new ProblemError(431, 'HEADERS_TOO_LARGE', 'The request headers exceed the size limit')
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new ProblemError(408, 'REQUEST_TIMEOUT', 'The request did not arrive in time')
    default:
      return new ProblemError(400, 'MALFORMED_REQUEST', 'The request is not valid HTTP')
  }
}
