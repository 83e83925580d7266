// A JSON body read within bounds as it arrives, for routes that take large bodies (the library's 16 MiB sync): each
// chunk is scanned on arrival for nesting depth and for the number of members and elements, and a body past either
// bound is refused at once, before the rest is read and before JSON.parse, whose run on millions of tiny members
// would hold the event loop for seconds. Only a body within bounds is parsed, and its parse is then short: what is
// left of 16 MiB after a few thousand members is long strings (base64 PNGs), which parse fast.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ProblemError } from './problem.ts'

export interface JsonBounds {
  /** The body's size limit, in bytes (the route's bodyLimit). */
  maxBytes: number
  /** Deepest nesting of objects and arrays. */
  maxDepth: number
  /** Most object members and array elements, all levels together. */
  maxValues: number
}

const QUOTE = 0x22
const BACKSLASH = 0x5c
const OPEN_OBJECT = 0x7b
const OPEN_ARRAY = 0x5b
const CLOSE_OBJECT = 0x7d
const CLOSE_ARRAY = 0x5d
const COMMA = 0x2c
const COLON = 0x3a

/** Counts as bytes arrive; throws a 400 ProblemError once the body goes past a bound. */
class JsonScan {
  private depth = 0
  /** Values so far: a member is counted at its colon, an element after a comma (the first one of each array too). */
  private values = 0
  private inString = false
  private escaped = false
  /** The last byte outside a string that was not white space: an array's first element follows `[`. */
  private previous = 0

  constructor(private readonly bounds: JsonBounds) {}

  scan(chunk: Uint8Array): void {
    const { maxDepth, maxValues } = this.bounds
    for (let i = 0; i < chunk.length; i++) {
      const byte = chunk[i]!
      if (this.inString) {
        if (this.escaped) this.escaped = false
        else if (byte === BACKSLASH) this.escaped = true
        else if (byte === QUOTE) this.inString = false
        continue
      }
      if (byte <= 0x20) continue
      if (byte === QUOTE) this.inString = true
      else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
        if (++this.depth > maxDepth) throw refused(`is nested more than ${maxDepth} levels deep`)
      } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) this.depth--
      else if (byte === COLON || byte === COMMA) this.values++
      if (this.previous === OPEN_ARRAY && byte !== CLOSE_ARRAY) this.values++
      if (this.values > maxValues) throw refused(`holds more than ${maxValues} members and elements`)
      this.previous = byte
    }
  }
}

const refused = (why: string) => new ProblemError(400, 'MALFORMED_REQUEST', `The JSON request body ${why}`)

/** Replaces the JSON parser of `app`'s routes (an encapsulated plugin's) with one that keeps to `bounds`. */
export function boundedJsonBodies(app: FastifyInstance, bounds: JsonBounds): void {
  // Fastify's own parser for the text, with its refusal of `__proto__` and `constructor.prototype` keys.
  const parseJson = app.getDefaultJsonParser('error', 'error')
  app.removeContentTypeParser('application/json')
  app.addContentTypeParser('application/json', (request: FastifyRequest, payload, done) => {
    const scan = new JsonScan(bounds)
    const chunks: Buffer[] = []
    let length = 0
    let finished = false
    const finish = (error: Error | null, body?: unknown) => {
      if (finished) return
      finished = true
      // What is left of a refused body is read and dropped as it comes, never kept or scanned.
      if (error) payload.removeAllListeners('data').resume()
      done(error, body)
    }
    payload.on('data', (chunk: Buffer) => {
      if (finished) return
      length += chunk.length
      if (length > bounds.maxBytes) {
        finish(new ProblemError(413, 'PAYLOAD_TOO_LARGE', 'The request body exceeds the limit for this route'))
        return
      }
      try {
        scan.scan(chunk)
      } catch (error) {
        finish(error as Error)
        return
      }
      chunks.push(chunk)
    })
    payload.on('error', (error: Error) => finish(error))
    payload.on('end', () => {
      if (finished) return
      if (length === 0) {
        finish(new ProblemError(400, 'MALFORMED_REQUEST', 'The JSON request body is empty'))
        return
      }
      parseJson(request, Buffer.concat(chunks, length).toString('utf8'), (error, body) => finish(error, body))
    })
  })
}
