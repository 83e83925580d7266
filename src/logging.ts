// Logger options shared by the server and the CLI: structured JSON, secrets redacted, no query strings, and errors
// as bounded summaries that never carry a failed query's parameters.
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
  // A payload's salt: with it, the identity commitment of an anchor becomes guessable from a list of e-mail addresses.
  '*.salt',
]

export function loggerOptions(level: string): LoggerOptions {
  return {
    level,
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    serializers: {
      err: errorSummary,
      // OAuth callbacks carry `code` and `state` in the query string: log the path only.
      req: (request: { method: string; url: string; ip?: string; id?: string }) => ({
        method: request.method,
        path: request.url.split('?')[0],
        ip: request.ip,
      }),
    },
  }
}

const MAX_MESSAGE_CHARACTERS = 300
const MAX_STACK_FRAMES = 12
const MAX_CAUSE_DEPTH = 3

interface ErrorSummary {
  type: string
  message: string
  code?: string
  stack?: string
  cause?: ErrorSummary
}

/**
 * An error as a log line may show it: its type, code, the first line of its message, cut short, and its stack frames.
 * Drizzle's query errors put the SQL parameters (library labels, PNG data, e-mail addresses) on the message's second
 * line and in `params`; PostgreSQL's errors quote the offending value in their message ("invalid input syntax for type
 * integer: "…"") and in `detail`. None of those is copied: a database error's quoted text is replaced.
 */
export function errorSummary(error: unknown, depth = 0): ErrorSummary {
  // Some call sites log only a message; it is cut short like any other.
  if (typeof error === 'string') return { type: 'string', message: firstLine(error) }
  if (!(error instanceof Error)) return { type: typeof error, message: '(not an Error)' }
  const { code, severity } = error as { code?: unknown; severity?: unknown }
  // PostgreSQL's errors (node-postgres and PGlite alike) carry a severity.
  const message = typeof severity === 'string' ? error.message.replace(/"[^"]*"/g, '"…"') : error.message
  const frames = (error.stack ?? '').split('\n').filter((line) => line.startsWith('    at '))
  return {
    type: error.name,
    message: firstLine(message),
    ...(typeof code === 'string' && { code }),
    ...(frames.length > 0 && { stack: frames.slice(0, MAX_STACK_FRAMES).join('\n') }),
    ...(error.cause !== undefined && depth < MAX_CAUSE_DEPTH && { cause: errorSummary(error.cause, depth + 1) }),
  }
}

function firstLine(message: string): string {
  const line = message.split('\n', 1)[0] ?? ''
  return line.length > MAX_MESSAGE_CHARACTERS ? `${line.slice(0, MAX_MESSAGE_CHARACTERS)}…` : line
}
