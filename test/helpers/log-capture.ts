// A real pino logger with the service's options whose lines the test reads back.
import { Writable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { loggerOptions } from '../../src/logging.ts'

export interface LogCapture {
  /** Every line written so far, in order (clear it with `lines.length = 0`). */
  lines: string[]
  logger: FastifyBaseLogger
}

export function captureLogs(level: string): LogCapture {
  const lines: string[] = []
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(chunk.toString())
      done()
    },
  })
  return { lines, logger: pino(loggerOptions(level), sink) as FastifyBaseLogger }
}
