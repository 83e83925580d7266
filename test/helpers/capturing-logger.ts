// A pino logger at info whose lines a test reads back (each line one JSON object, as production writes them).
import { Writable } from 'node:stream'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'

export function capturingLogger(): { logger: FastifyBaseLogger; lines: string[] } {
  const lines: string[] = []
  const stream = new Writable({
    write(chunk, _encoding, done) {
      lines.push(String(chunk))
      done()
    },
  })
  return { logger: pino({ level: 'info' }, stream) as unknown as FastifyBaseLogger, lines }
}
