// Prometheus metrics: one registry per app, so tests can build several apps in one process.
import { createHash, timingSafeEqual } from 'node:crypto'
import type { FastifyInstance, FastifyRequest } from 'fastify'
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
  return {
    registry,
    httpRequests: new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests by route template and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'HTTP request latency by route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
  }
}

/** `token`: the bearer token /metrics requires (METRICS_TOKEN); undefined leaves it open (development). */
export function registerHttpMetrics(app: FastifyInstance, metrics: Metrics, token: string | undefined): void {
  app.addHook('onResponse', async (request, reply) => {
    // The route template, not the URL: one series per route however many tx hashes are asked for.
    const labels = {
      method: request.method,
      route: request.routeOptions.url ?? 'unmatched',
      status: String(reply.statusCode),
    }
    metrics.httpRequests.inc(labels)
    metrics.httpDuration.observe(labels, reply.elapsedTime / 1000)
  })
  const onRequest = token === undefined ? [] : [metricsGuard(token)]
  app.get('/metrics', { schema: { hide: true }, onRequest }, async (_request, reply) => {
    reply.type(metrics.registry.contentType)
    return metrics.registry.metrics()
  })
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
