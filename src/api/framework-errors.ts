// Errors raised before a request reaches a route, by Fastify's router or Node's HTTP server, as problem bodies too.
// None of them echoes the request: a URL or a header can carry a token, and the answer may land in someone's logs.
import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from 'node:http'
import type { Duplex } from 'node:stream'
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify'
import type { AnswerHeaders } from './cors.ts'
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
export function clientErrorHandler(error: NodeJS.ErrnoException, socket: Duplex): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  answerOnSocket(socket, clientProblem(error.code), { 'X-Content-Type-Options': 'nosniff' })
}

/** A problem written straight to a socket no request object stands for, then the connection closed. */
function answerOnSocket(socket: Duplex, problem: ProblemError, headers: Record<string, string>): void {
  if (socket.writable) {
    const body = JSON.stringify(problem.toBody())
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`)
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\n` +
        `Content-Type: ${PROBLEM_CONTENT_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `${lines.join('')}Connection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}

/**
 * What Node's HTTP server answers by itself unless the server takes it. An `Expect` other than `100-continue` (a bare
 * 417 from Node) is handed to Fastify like any request, and the app's hook refuses it (`requestProblem`). CONNECT
 * reaches no request handler at all (Node hands over the socket, for a tunnel): it is answered here, 405 with the headers
 * every answer carries, rather than by a closed connection. A request without `Host` is let through by the server
 * (`requireHostHeader: false`) and refused by the app's hook too.
 */
export function answerServerEdges(server: Server, headers: AnswerHeaders): void {
  server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => {
    server.emit('request', request, response)
  })
  server.on('connect', (request: IncomingMessage, socket: Duplex) => {
    const problem = new ProblemError(405, 'METHOD_NOT_ALLOWED', 'This server is not a proxy: CONNECT is not served')
    answerOnSocket(socket, problem, {
      ...answerHeadersFor(headers, request),
      Allow: 'GET, HEAD, POST, PUT, DELETE, OPTIONS',
    })
  })
}

function answerHeadersFor(headers: AnswerHeaders, request: IncomingMessage): Record<string, string> {
  const origin = headers.allowOrigin(request.headers.origin)
  return { ...headers.always, ...(origin !== undefined && { 'access-control-allow-origin': origin }) }
}

/** Node's own test of an `Expect` it meets (lib/_http_server.js). */
const CONTINUE_EXPECTATION = /(?:^|\W)100-continue(?:$|\W)/i

/**
 * What no route can serve: an HTTP/1.1 request without `Host`, or any with two (RFC 9112, 3.2), answered 400 like any
 * other malformed one; an HTTP/1.1 `Expect` other than `100-continue` (RFC 9110, 10.1.1), 417, with the connection closed, since a
 * body the client holds back may follow. HTTP/1.0's `Expect` is ignored, as that RFC asks and Node does.
 */
export function requestProblem(request: FastifyRequest): ProblemError | undefined {
  const { host, expect } = request.headers
  const http11 = request.raw.httpVersion === '1.1'
  if (host === undefined && http11) {
    return new ProblemError(400, 'MALFORMED_REQUEST', 'An HTTP/1.1 request must carry a Host header')
  }
  // Node keeps the first of two Host headers; a proxy in front may have routed by the second (RFC 9112, 3.2: 400).
  if (hostHeaders(request.raw.rawHeaders) > 1) {
    return new ProblemError(400, 'MALFORMED_REQUEST', 'A request must carry one Host header, not several')
  }
  if (expect !== undefined && http11 && !CONTINUE_EXPECTATION.test(expect)) {
    return new ProblemError(417, 'EXPECTATION_FAILED', 'The only expectation this server meets is 100-continue', {
      headers: { connection: 'close' },
    })
  }
  return undefined
}

function hostHeaders(rawHeaders: readonly string[]): number {
  let count = 0
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i]!.toLowerCase() === 'host') count++
  return count
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
