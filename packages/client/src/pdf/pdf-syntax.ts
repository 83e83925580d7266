// A small reader of PDF object syntax (ISO 32000-1, 7.2-7.3): enough to read cross-reference sections, trailers,
// catalogs and streams. Web APIs only, so the verification page runs the same code as the CLI.

import { damaged } from './pdf-errors.ts'

export class PdfName {
  constructor(readonly name: string) {}
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}
}

export class PdfString {
  constructor(readonly bytes: Uint8Array) {}
}

export type PdfValue = null | boolean | number | PdfName | PdfString | PdfRef | PdfValue[] | PdfDict

export class PdfDict {
  constructor(readonly entries: Map<string, PdfValue>) {}

  get(key: string): PdfValue | undefined {
    return this.entries.get(key)
  }
}

/** A stream object: its dictionary and where its raw (still encoded) data lies in the file. */
export interface PdfStreamObject {
  dict: PdfDict
  data: Uint8Array
}

const WHITESPACE = new Set([0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20])
const DELIMITERS = new Set([0x28, 0x29, 0x3c, 0x3e, 0x5b, 0x5d, 0x7b, 0x7d, 0x2f, 0x25])
const isRegular = (byte: number) => !WHITESPACE.has(byte) && !DELIMITERS.has(byte)
const latin1 = new TextDecoder('latin1')

/** A cursor over the file's bytes. Every failure is a damaged-file error naming the byte offset. */
export class PdfLexer {
  pos: number

  constructor(
    readonly bytes: Uint8Array,
    pos = 0,
  ) {
    this.pos = pos
  }

  /** The user's words first (what cannot be read, and where), then the parser's, for whoever repairs the file. */
  fail(what: string): never {
    throw damaged(`its structure cannot be read at byte ${this.pos} (${what})`)
  }

  skipWhitespace(): void {
    const { bytes } = this
    while (this.pos < bytes.length) {
      const byte = bytes[this.pos]!
      if (WHITESPACE.has(byte)) this.pos++
      else if (byte === 0x25) {
        while (this.pos < bytes.length && bytes[this.pos] !== 0x0a && bytes[this.pos] !== 0x0d) this.pos++
      } else break
    }
  }

  /** The next run of regular characters (a keyword or a number), without consuming it. */
  peekWord(): string {
    this.skipWhitespace()
    let end = this.pos
    while (end < this.bytes.length && isRegular(this.bytes[end]!)) end++
    return latin1.decode(this.bytes.subarray(this.pos, end))
  }

  readWord(): string {
    const word = this.peekWord()
    this.pos += word.length
    return word
  }

  expectKeyword(keyword: string): void {
    if (this.readWord() !== keyword) this.fail(`expected "${keyword}"`)
  }

  readInteger(): number {
    const word = this.readWord()
    if (!/^[+-]?\d+$/.test(word)) this.fail(`expected an integer, found "${word.slice(0, 20)}"`)
    return Number(word)
  }

  /** Reads one object; `N G R` references are returned as refs, never resolved. */
  readValue(depth = 0): PdfValue {
    if (depth > 100) this.fail('objects nested too deeply')
    this.skipWhitespace()
    const byte = this.bytes[this.pos]
    if (byte === undefined) this.fail('unexpected end of file')
    if (byte === 0x2f) return this.readName()
    if (byte === 0x28) return this.readLiteralString()
    if (byte === 0x5b) {
      this.pos++
      const items: PdfValue[] = []
      for (;;) {
        this.skipWhitespace()
        if (this.bytes[this.pos] === 0x5d) {
          this.pos++
          return items
        }
        items.push(this.readValue(depth + 1))
      }
    }
    if (byte === 0x3c) {
      if (this.bytes[this.pos + 1] !== 0x3c) return this.readHexString()
      this.pos += 2
      const entries = new Map<string, PdfValue>()
      for (;;) {
        this.skipWhitespace()
        if (this.bytes[this.pos] === 0x3e && this.bytes[this.pos + 1] === 0x3e) {
          this.pos += 2
          return new PdfDict(entries)
        }
        const key = this.readValue(depth + 1)
        if (!(key instanceof PdfName)) this.fail('expected a name as dictionary key')
        entries.set(key.name, this.readValue(depth + 1))
      }
    }
    const word = this.readWord()
    if (word === 'true') return true
    if (word === 'false') return false
    if (word === 'null') return null
    if (!/^[+-]?(\d+\.?\d*|\.\d+)$/.test(word))
      this.fail(`unexpected "${word.slice(0, 20) || latin1.decode(this.bytes.subarray(this.pos, this.pos + 1))}"`)
    const number = Number(word)
    if (/^\d+$/.test(word)) {
      // An integer may start a reference "N G R": look ahead without committing.
      const mark = this.pos
      const gen = this.peekWord()
      if (/^\d+$/.test(gen)) {
        this.pos += gen.length
        if (this.peekWord() === 'R') {
          this.pos += 1
          return new PdfRef(number, Number(gen))
        }
      }
      this.pos = mark
    }
    return number
  }

  private readName(): PdfName {
    this.pos++
    const start = this.pos
    while (this.pos < this.bytes.length && isRegular(this.bytes[this.pos]!)) this.pos++
    const raw = latin1.decode(this.bytes.subarray(start, this.pos))
    return new PdfName(
      raw.replace(/#([0-9a-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    )
  }

  private readLiteralString(): PdfString {
    this.pos++
    const out: number[] = []
    let depth = 1
    const { bytes } = this
    while (this.pos < bytes.length) {
      const byte = bytes[this.pos++]!
      if (byte === 0x5c) {
        const next = bytes[this.pos++]
        if (next === undefined) break
        const simple: Record<number, number> = { 110: 10, 114: 13, 116: 9, 98: 8, 102: 12 }
        if (next in simple) out.push(simple[next]!)
        else if (next >= 0x30 && next <= 0x37) {
          let value = next - 0x30
          for (let i = 0; i < 2 && bytes[this.pos]! >= 0x30 && bytes[this.pos]! <= 0x37; i++) {
            value = value * 8 + bytes[this.pos++]! - 0x30
          }
          out.push(value & 0xff)
        } else if (next === 0x0d) {
          if (bytes[this.pos] === 0x0a) this.pos++
        } else if (next !== 0x0a) out.push(next)
      } else {
        if (byte === 0x28) depth++
        if (byte === 0x29 && --depth === 0) return new PdfString(Uint8Array.from(out))
        out.push(byte)
      }
    }
    this.fail('unterminated string')
  }

  private readHexString(): PdfString {
    const end = this.bytes.indexOf(0x3e, this.pos)
    if (end < 0) this.fail('unterminated hex string')
    const hex = latin1.decode(this.bytes.subarray(this.pos + 1, end)).replace(/\s+/g, '')
    if (!/^[0-9a-fA-F]*$/.test(hex)) this.fail('invalid hex string')
    this.pos = end + 1
    const padded = hex.length % 2 ? `${hex}0` : hex
    return new PdfString(Uint8Array.from(padded.match(/../g) ?? [], (pair) => Number.parseInt(pair, 16)))
  }
}

/** Resolves `/Length` when it is an indirect reference. */
export type LengthResolver = (ref: PdfRef) => number | Promise<number>

export interface IndirectObject {
  num: number
  gen: number
  value: PdfValue
  stream?: PdfStreamObject
  /** Offset just past `endobj`. */
  end: number
}

/**
 * The value after the `N G obj` that starts at `offset`, its stream (if any) unread: what the object's dictionary
 * says of it. Throws when no object header and value are there.
 */
export function objectValueAt(bytes: Uint8Array, offset: number): PdfValue {
  const lexer = new PdfLexer(bytes, offset)
  lexer.readInteger()
  lexer.readInteger()
  lexer.expectKeyword('obj')
  return lexer.readValue()
}

/** Text of PDF syntax (ASCII, or Latin-1 at most) as the bytes a file holds. */
export const latin1Bytes = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))

/** Reads the indirect object `N G obj ... endobj` that starts at `offset`. */
export async function readIndirectObject(
  bytes: Uint8Array,
  offset: number,
  resolveLength: LengthResolver,
): Promise<IndirectObject> {
  const lexer: PdfLexer = new PdfLexer(bytes, offset)
  const num = lexer.readInteger()
  const gen = lexer.readInteger()
  lexer.expectKeyword('obj')
  const value = lexer.readValue()
  let stream: PdfStreamObject | undefined
  if (value instanceof PdfDict && lexer.peekWord() === 'stream') {
    lexer.pos += 'stream'.length
    // The keyword is followed by CRLF or LF (7.3.8.1); a lone CR is tolerated.
    if (bytes[lexer.pos] === 0x0d) lexer.pos++
    if (bytes[lexer.pos] === 0x0a) lexer.pos++
    const lengthValue = value.get('Length')
    const length = lengthValue instanceof PdfRef ? await resolveLength(lengthValue) : lengthValue
    if (typeof length !== 'number' || !Number.isInteger(length) || length < 0 || lexer.pos + length > bytes.length) {
      lexer.fail(`stream of object ${num} has no valid /Length`)
    }
    const data = bytes.subarray(lexer.pos, lexer.pos + length)
    lexer.pos += length
    if (lexer.readWord() !== 'endstream') lexer.fail(`stream of object ${num} does not end where its /Length says`)
    stream = { dict: value, data }
  }
  lexer.expectKeyword('endobj')
  return { num, gen, value, stream, end: lexer.pos }
}
