// Answers given before Fastify routes a request. Fastify's work on every request (routing, the request and reply
// objects, the hook runners, the response listeners its logger and onResponse hooks need) costs more than a cached
// verification itself, the service's hottest answer (docs/performance.md). A route adds an early answer for the
// requests it can answer at once, giving the same status, headers, body, log lines and metrics Fastify's route would;
// every other request, and every request it is unsure of, goes to Fastify as before. `app.inject` always goes to
// Fastify: tests compare the two paths (test/api/verify-early-answer.test.ts).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { FastifyBaseLogger, FastifyServerFactory } from 'fastify'
import type { Logger } from 'pino'

/** Answers `request` and returns true, or returns false having written nothing. */
export type EarlyAnswer = (request: IncomingMessage, response: ServerResponse) => boolean

interface ServerSettings {
  http?: object
  https?: unknown
  http2?: unknown
  keepAliveTimeout: number
  requestTimeout: number
  connectionTimeout: number
  maxRequestsPerSocket: number
}

/** Fastify's `serverFactory`: the HTTP server Fastify would make, trying `answers` before Fastify's own handler. */
export function serverWithEarlyAnswers(answers: readonly EarlyAnswer[]): FastifyServerFactory {
  return (fastifyHandler, options) => {
    // The settings Fastify gives a server of its own making; its options carry its defaults by now.
    const settings = options as unknown as ServerSettings
    // The service speaks plain HTTP/1.1 behind its TLS-terminating proxy; a server of another kind is not made here.
    if (settings.https || settings.http2) throw new Error('Early answers are served over plain HTTP/1.1 only')
    const server = createServer(settings.http ?? {}, (request, response) => {
      for (const answer of answers) if (answer(request, response)) return
      fastifyHandler(request, response)
    })
    server.keepAliveTimeout = settings.keepAliveTimeout
    server.requestTimeout = settings.requestTimeout
    server.setTimeout(settings.connectionTimeout)
    if (settings.maxRequestsPerSocket > 0) server.maxRequestsPerSocket = settings.maxRequestsPerSocket
    return server
  }
}

/** Request ids as Fastify makes them (`req-` and a counter in base 36), shared by Fastify and the early answers. */
export function requestIds(): () => string {
  // Below 2^31, as Fastify's: the counter stays a small integer for V8.
  let next = 0
  return () => {
    next = (next + 1) & 0x7fffffff
    return `req-${next.toString(36)}`
  }
}

/**
 * The two lines Fastify logs for every request at `info` ("incoming request", "request completed"), for an early
 * answer: call on arrival, then call what it returns once answered. Nothing is built when `info` is off.
 */
export function logRequest(
  log: FastifyBaseLogger,
  requestId: () => string,
  request: IncomingMessage,
  ip: string,
): ((statusCode: number, milliseconds: number) => void) | undefined {
  // The app's loggers are pino's.
  if (!(log as unknown as Logger).isLevelEnabled('info')) return undefined
  const child = log.child({ reqId: requestId() })
  // The shapes the logger's `req` and `res` serializers read from Fastify's request and reply.
  child.info({ req: { method: request.method, url: request.url, ip } }, 'incoming request')
  return (statusCode, milliseconds) =>
    child.info({ res: { statusCode }, responseTime: milliseconds }, 'request completed')
}
