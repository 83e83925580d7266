// Reads one cross-reference section (ISO 32000-1, 7.5.4 tables, 7.5.8 streams, 7.5.8.4 hybrid files) and its
// trailer. Each incremental revision of a file ends with one such section.

import { damaged } from './pdf-errors.ts'
import { PdfDict, PdfLexer, PdfName, readIndirectObject } from './pdf-syntax.ts'
import { decodeStream } from './stream-filters.ts'

export type XrefEntry =
  | { type: 'free' }
  | { type: 'offset'; offset: number; gen: number }
  | { type: 'compressed'; stream: number; index: number }

export interface XrefSection {
  /** Where the section starts: the value of the `startxref` that points at it. */
  offset: number
  kind: 'table' | 'stream'
  entries: Map<number, XrefEntry>
  /** The trailer dictionary, or the cross-reference stream's dictionary (which plays its role). */
  trailer: PdfDict
  /** Byte just past the section: past the trailer dictionary, or past the stream object's `endobj`. */
  end: number
}

/** Sanity bound on object numbers; /Size beyond it is a damaged (or hostile) file, not a document. */
const MAX_OBJECTS = 8_388_607

export async function readXrefSection(bytes: Uint8Array, offset: number): Promise<XrefSection> {
  if (!Number.isSafeInteger(offset) || offset < 0 || offset >= bytes.length) {
    throw damaged(`startxref points outside the file (${offset})`)
  }
  const lexer = new PdfLexer(bytes, offset)
  if (lexer.peekWord() === 'xref') return readXrefTable(bytes, lexer, offset)
  return readXrefStream(bytes, offset)
}

async function readXrefTable(bytes: Uint8Array, lexer: PdfLexer, offset: number): Promise<XrefSection> {
  lexer.expectKeyword('xref')
  const entries = new Map<number, XrefEntry>()
  while (lexer.peekWord() !== 'trailer') {
    const first = lexer.readInteger()
    const count = lexer.readInteger()
    if (first < 0 || count < 0 || first + count > MAX_OBJECTS) lexer.fail('invalid cross-reference subsection')
    for (let i = 0; i < count; i++) {
      const position = lexer.readInteger()
      const gen = lexer.readInteger()
      const kind = lexer.readWord()
      if (kind !== 'n' && kind !== 'f') lexer.fail('invalid cross-reference entry')
      // The first entry for a number wins within a section, as in every reader.
      if (entries.has(first + i)) continue
      entries.set(first + i, kind === 'n' ? { type: 'offset', offset: position, gen } : { type: 'free' })
    }
  }
  lexer.expectKeyword('trailer')
  const trailer = lexer.readValue()
  if (!(trailer instanceof PdfDict)) lexer.fail('trailer is not a dictionary')
  const section: XrefSection = { offset, kind: 'table', entries, trailer, end: lexer.pos }
  // A hybrid-reference file lists objects kept in object streams in a side stream for PDF 1.5 readers.
  const side = trailer.get('XRefStm')
  if (typeof side === 'number') {
    const stream = await readXrefStream(bytes, side)
    for (const [num, entry] of stream.entries) if (!entries.has(num)) entries.set(num, entry)
  }
  return section
}

async function readXrefStream(bytes: Uint8Array, offset: number): Promise<XrefSection> {
  const object = await readIndirectObject(bytes, offset, () => {
    throw damaged(`cross-reference stream at byte ${offset} has an indirect /Length`)
  })
  const dict = object.stream?.dict
  const type = dict?.get('Type')
  if (!object.stream || !dict || !(type instanceof PdfName) || type.name !== 'XRef') {
    throw damaged(`startxref ${offset} points at neither a cross-reference table nor a cross-reference stream`)
  }
  const widths = dict.get('W')
  const size = dict.get('Size')
  if (
    !Array.isArray(widths) ||
    widths.length !== 3 ||
    !widths.every((w) => typeof w === 'number' && w >= 0 && w <= 8)
  ) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /W`)
  }
  if (typeof size !== 'number' || size < 0 || size > MAX_OBJECTS) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /Size`)
  }
  const index = dict.get('Index') ?? [0, size]
  if (!Array.isArray(index) || index.length % 2 !== 0 || !index.every((n) => typeof n === 'number' && n >= 0)) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /Index`)
  }
  const [w0, w1, w2] = widths as [number, number, number]
  const rowLength = w0 + w1 + w2
  const data = await decodeStream(object.stream)
  const entries = new Map<number, XrefEntry>()
  let at = 0
  const field = (width: number, fallback: number) => {
    if (width === 0) return fallback
    let value = 0
    for (let i = 0; i < width; i++) value = value * 256 + data[at++]!
    return value
  }
  for (let pair = 0; pair < index.length; pair += 2) {
    const first = index[pair] as number
    const count = index[pair + 1] as number
    if (first + count > MAX_OBJECTS) throw damaged(`cross-reference stream at byte ${offset} has an invalid /Index`)
    for (let i = 0; i < count; i++) {
      if (at + rowLength > data.length) throw damaged(`cross-reference stream at byte ${offset} is truncated`)
      const kind = field(w0, 1)
      const a = field(w1, 0)
      const b = field(w2, 0)
      if (entries.has(first + i)) continue
      if (kind === 0) entries.set(first + i, { type: 'free' })
      else if (kind === 1) entries.set(first + i, { type: 'offset', offset: a, gen: b })
      else if (kind === 2) entries.set(first + i, { type: 'compressed', stream: a, index: b })
      // Other types are reserved: readers treat them as null references (7.5.8.3).
    }
  }
  return { offset, kind: 'stream', entries, trailer: dict, end: object.end }
}
