// The early answer (src/api/early-answers.ts) of GET /api/verify/:txHash: a well-formed hash whose verified result
// this process holds fresh is answered before Fastify routes the request, with what the route would send (status,
// headers, body, 304 for a current ETag), counted by the route's per-IP limit, its metrics series and, at `info`, its
// two log lines. Anything else (HEAD, a query string, an encoded or malformed hash, a miss, a refusal of the limit,
// shutdown) goes to the route.
import type { IncomingMessage, ServerResponse } from 'node:http'
import type { FastifyBaseLogger } from 'fastify'
import { parseTxHashParam } from '../../verify/tx-hash-param.ts'
import type { VerifyService } from '../../verify/verify-service.ts'
import type { Lifecycle } from '../app-types.ts'
import type { ClientAddress } from '../client-address.ts'
import type { AnswerHeaders } from '../cors.ts'
import { type EarlyAnswer, logRequest } from '../early-answers.ts'
import { etagMatches } from '../etag.ts'
import type { HttpSeries } from '../http-series.ts'
import type { Limit } from '../plugins/rate-limit.ts'

export interface VerifyEarlyAnswerOptions {
  /** The route's path up to its parameter, `/api/verify/`. */
  pathPrefix: string
  service: VerifyService
  countEarly: NonNullable<Limit['countEarly']>
  headers: AnswerHeaders
  lifecycle: Lifecycle
  clientAddress: ClientAddress
  /** The route's series for GET and a status. */
  seriesOf: (method: string, status: number) => HttpSeries
  log: FastifyBaseLogger
  nextRequestId: () => string
  /** The route's Cache-Control for a fresh answer. */
  freshCacheControl: string
  contentType: string
}

export function verifyEarlyAnswer(options: VerifyEarlyAnswerOptions): EarlyAnswer {
  const { pathPrefix, service, countEarly, headers, lifecycle, clientAddress, seriesOf, log } = options
  // Headers go to writeHead as one flat list of names and values: building it costs a fraction of an object spread
  // with the answer's own headers (~2 µs).
  const always = [...Object.entries(headers.always).flat(), 'cache-control', options.freshCacheControl]
  return (request: IncomingMessage, response: ServerResponse): boolean => {
    const { url } = request
    if (request.method !== 'GET' || url === undefined || !url.startsWith(pathPrefix) || lifecycle.shuttingDown) {
      return false
    }
    const startedAt = performance.now()
    // The two spellings' patterns refuse `?`, `/` and `%`: a query string or an encoded character goes to the route.
    const txHash = parseTxHashParam(url.slice(pathPrefix.length))
    if (txHash === undefined) return false
    const ip = clientAddress(request)
    if (ip === undefined) return false
    // Counted here whoever answers; the route's limit hook takes this verdict.
    if (countEarly(request, ip) !== undefined) return false
    const hit = service.freshHit(txHash)
    if (hit === undefined) return false

    const completed = logRequest(log, options.nextRequestId, request, ip)
    const answer = [...always, 'etag', hit.etag]
    const allowOrigin = headers.allowOrigin(request.headers.origin)
    if (allowOrigin !== undefined) answer.push('access-control-allow-origin', allowOrigin)
    let status: number
    if (etagMatches(request.headers['if-none-match'], hit.etag)) {
      status = 304
      response.writeHead(status, answer).end()
    } else {
      status = 200
      answer.push('content-type', options.contentType, 'content-length', String(Buffer.byteLength(hit.body)))
      response.writeHead(status, answer).end(hit.body)
    }
    // Fastify times a response until its `finish` event; here, until the write is handed to the socket.
    const milliseconds = performance.now() - startedAt
    seriesOf('GET', status).observe(milliseconds / 1000)
    completed?.(status, milliseconds)
    return true
  }
}
