// Prometheus metrics: one registry per app, so tests can build several apps in one process.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { collectDefaultMetrics, Registry } from 'prom-client'
import { HttpMetrics, type HttpSeries } from './http-series.ts'
import { ProblemError } from './problem.ts'

export interface Metrics {
  registry: Registry
  http: HttpMetrics
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  return { registry, http: new HttpMetrics(registry) }
}

/**
 * Times (and so counts) every response by route template and status. `token`: the bearer token /metrics requires
 * (METRICS_TOKEN); undefined leaves it open (development). Call before any route is added: each route gets its own
 * hook, made when the route is added, so that a response costs no lookup of its route and no new labels object.
 */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method]
    // A new array, never a push: Fastify copies a GET route's options for its HEAD route before this hook runs.
    route.onResponse = [...toArray(route.onResponse), seriesHook(metrics, route.url, methods)]
  })
  // Requests no route matched (Fastify's 404 handler is not a route, so no onRoute).
  const unmatched = seriesHook(metrics, 'unmatched', [])
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) unmatched(request, reply, done)
    else done()
  })
  const onRequest = token === undefined ? [] : [metricsGuard(token)]
  app.get('/metrics', { schema: { hide: true }, onRequest }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
}

/** What finds one route's series by method and status, each made on first use. */
function routeSeries(metrics: Metrics, route: string, methods: readonly string[]) {
  const seen = new Map<number | string, HttpSeries>()
  return (method: string, status: number): HttpSeries => {
    // Most routes answer one method: the status alone is then the key.
    const key = methods.length === 1 ? status : `${method} ${status}`
    let series = seen.get(key)
    if (series === undefined) {
      series = metrics.http.series({ method, route, status: String(status) })
      seen.set(key, series)
    }
    return series
  }
}

/** An onResponse hook for one route: its series found by the status. */
function seriesHook(metrics: Metrics, route: string, methods: readonly string[]) {
  const seriesOf = routeSeries(metrics, route, methods)
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    seriesOf(request.method, reply.statusCode).observe(reply.elapsedTime / 1000)
    done()
  }
}

function toArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return []
  return Array.isArray(value) ? value : [value]
}

/** Compares digests, so neither the token's length nor its prefix leaks through the time a wrong guess takes. */
function metricsGuard(token: string) {
  const expected = digest(token)
  return async (request: FastifyRequest) => {
    const match = /^Bearer (\S+)$/i.exec(request.headers.authorization ?? '')
    if (!match || !timingSafeEqual(digest(match[1]!), expected)) {
      throw new ProblemError(401, 'UNAUTHENTICATED', 'The metrics need the bearer token of METRICS_TOKEN', {
        headers: { 'www-authenticate': 'Bearer' },
      })
    }
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest()
}
