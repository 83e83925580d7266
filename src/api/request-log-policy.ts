// The service's per-request log lines (REQUEST_LOG), through Fastify's own LogController. Behind a load balancer the
// line for every request is the balancer's job (HAProxy's `option httplog` writes one per request, answers from its
// cache included); an instance then logs only what needs its own view: a request answered 5xx, ended by an error, or
// slower than REQUEST_LOG_SLOW_MS. The other requests cost no log work at all: not even a child logger is built for
// them (lazy-child-logger.ts).
import { type FastifyReply, type FastifyRequest, LogController } from 'fastify'
import type { Config } from '../config/load-config.ts'

/** One line at the end of a request that failed or took long, carrying what Fastify's two lines would have. */
class FailedOrSlowRequestLog extends LogController {
  constructor(private readonly slowMs: number) {
    super()
  }

  override incomingRequest(): void {}

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const responseTime = reply.elapsedTime
    if (error) {
      reply.log.error({ req: request, res: reply, err: error, responseTime }, 'request errored')
    } else if (reply.statusCode >= 500 || responseTime >= this.slowMs) {
      reply.log.warn({ req: request, res: reply, responseTime }, 'request completed')
    }
  }
}

/** Fastify's `logController` for the setting; undefined keeps Fastify's own (both lines for every request). */
export function requestLogController({ mode, slowMs }: Config['requestLog']): LogController | undefined {
  switch (mode) {
    case 'all':
      return undefined
    case 'failed-or-slow':
      return new FailedOrSlowRequestLog(slowMs)
    case 'off':
      return new LogController({ disableRequestLogging: true })
  }
}
