// Logger options shared by the server and the CLI: structured JSON, secrets redacted, no query strings.
import type { LoggerOptions } from 'pino'

/** Paths pino replaces with "[redacted]": credentials must never reach a log line. */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-api-key"]',
  'res.headers["set-cookie"]',
  '*.password',
  '*.token',
  '*.code',
  '*.secret',
  '*.privateKey',
  '*.jwt',
]

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      // OAuth callbacks carry `code` and `state` in the query string: log the path only.
      req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
        method: request.method,
        path: request.url.split('?')[0],
        ip: request.ip,
      }),
    },
  }
}
