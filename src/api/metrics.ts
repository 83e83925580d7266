// Prometheus metrics: one registry per app, so tests can build several apps in one process.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Counter, collectDefaultMetrics, Histogram, Registry } from 'prom-client'
import { ProblemError } from './problem.ts'

export interface Metrics {
  registry: Registry
  httpRequests: Counter<'method' | 'route' | 'status'>
  httpDuration: Histogram<'method' | 'route' | 'status'>
}

export function createMetrics(): Metrics {
  const registry = new Registry()
  collectDefaultMetrics({ register: registry })
  const labelNames = ['method', 'route', 'status'] as const
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request latency by route template and status',
    labelNames,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  })
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by route template and status',
    labelNames,
    registers: [registry],
    // A response is one observation of the histogram, whose count per series is this counter: read at each scrape,
    // so that a response costs one update instead of two (each hashes its labels).
    async collect() {
      const { values } = await httpDuration.get()
      this.reset()
      for (const { metricName, labels, value } of values) {
        if (metricName === 'http_request_duration_seconds_count') this.inc(labels, value)
      }
    },
  })
  return { registry, httpRequests, httpDuration }
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

type LabelValues = Record<'method' | 'route' | 'status', string>

/** An onResponse hook for one route: its labels made once per method and status, then reused. */
function seriesHook(metrics: Metrics, route: string, methods: readonly string[]) {
  const seen = new Map<number | string, LabelValues>()
  const labelsOf = (method: string, status: number): LabelValues => {
    // Most routes answer one method: the status alone is then the key.
    const key = methods.length === 1 ? status : `${method} ${status}`
    let labels = seen.get(key)
    if (labels === undefined) {
      labels = { method, route, status: String(status) }
      seen.set(key, labels)
    }
    return labels
  }
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const labels = labelsOf(request.method, reply.statusCode)
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000)
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
