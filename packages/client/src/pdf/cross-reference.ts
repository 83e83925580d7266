// Reads one cross-reference section (ISO 32000-1, 7.5.4 tables, 7.5.8 streams, 7.5.8.4 hybrid files) and its
// trailer. Each incremental revision of a file ends with one such section. As qpdf, pdfsig and PDF.js do, a pointer a
// few bytes off its section (whitespace, an end-of-line counted or not: @signpdf points at the newline before `xref`)
// is accepted by looking for the section nearby; the correction is kept, so a writer can be shown the file as it
// should have been.

import { damaged, LostCrossReference, PdfError } from './pdf-errors.ts'
import { objectValueAt, PdfDict, PdfLexer, PdfName, readIndirectObject } from './pdf-syntax.ts'
import type { ReadBudget } from './read-budget.ts'
import { decodeStream } from './stream-filters.ts'

export type XrefEntry =
  | { type: 'free' }
  | { type: 'offset'; offset: number; gen: number }
  | { type: 'compressed'; stream: number; index: number }

export interface XrefSection {
  /** Where the section starts. */
  offset: number
  /** What the pointer to it said (a `startxref` or a `/Prev`): differs from `offset` when it was a few bytes off. */
  claimedOffset: number
  kind: 'table' | 'stream'
  entries: Map<number, XrefEntry>
  /** Tables only: where each in-use entry's ten-digit offset is written, so that a wrong one can be corrected. */
  entryPositions: Map<number, number>
  /** The trailer dictionary, or the cross-reference stream's dictionary (which plays its role). */
  trailer: PdfDict
  /** Byte just past the section: past the trailer dictionary, or past the stream object's `endobj`. */
  end: number
}

/** Sanity bound on object numbers; /Size beyond it is a damaged (or hostile) file, not a document. */
const MAX_OBJECTS = 8_388_607
/** How far from where its pointer says a section is looked for: "a few bytes off", generously. */
export const SEARCH_WINDOW = 256

/** Reads the section its pointer names, or the nearest one within a few bytes of it. */
export async function readXrefSection(bytes: Uint8Array, claimed: number, budget: ReadBudget): Promise<XrefSection> {
  if (!Number.isSafeInteger(claimed) || claimed < 0 || claimed >= bytes.length) {
    throw new LostCrossReference(`its cross-reference pointer points outside the file (to byte ${claimed})`)
  }
  try {
    return await readSectionAt(bytes, claimed, claimed, budget)
  } catch (error) {
    for (const candidate of nearbySections(bytes, claimed)) {
      try {
        return await readSectionAt(bytes, candidate, claimed, budget)
      } catch {
        // Not a section after all: try the next candidate.
      }
    }
    // A section found but unreadable says what is wrong with it; a pointer to nothing says where it points.
    if (error instanceof PdfError && !(error instanceof LostCrossReference)) throw error
    throw new LostCrossReference(
      `its cross-reference table is missing: nothing near byte ${claimed}, where it should be, can be read`,
    )
  }
}

async function readSectionAt(
  bytes: Uint8Array,
  offset: number,
  claimed: number,
  budget: ReadBudget,
): Promise<XrefSection> {
  const lexer = new PdfLexer(bytes, offset)
  if (lexer.peekWord() === 'xref') return readXrefTable(bytes, lexer, claimed, budget)
  return readXrefStream(bytes, offset, claimed, budget)
}

/** Starts of `xref` keywords and of indirect objects near `claimed`, nearest first. */
function nearbySections(bytes: Uint8Array, claimed: number): number[] {
  const from = Math.max(0, claimed - SEARCH_WINDOW)
  const to = Math.min(bytes.length, claimed + SEARCH_WINDOW)
  const text = new TextDecoder('latin1').decode(bytes.subarray(from, to))
  const found: number[] = []
  for (const match of text.matchAll(/(?<![^\s])(xref|\d+\s+\d+\s+obj)\b/g)) found.push(from + match.index)
  return found.sort((a, b) => Math.abs(a - claimed) - Math.abs(b - claimed))
}

async function readXrefTable(
  bytes: Uint8Array,
  lexer: PdfLexer,
  claimed: number,
  budget: ReadBudget,
): Promise<XrefSection> {
  lexer.skipWhitespace()
  const offset = lexer.pos
  lexer.expectKeyword('xref')
  const entries = new Map<number, XrefEntry>()
  const entryPositions = new Map<number, number>()
  while (lexer.peekWord() !== 'trailer') {
    const first = lexer.readInteger()
    const count = lexer.readInteger()
    if (first < 0 || count < 0 || first + count > MAX_OBJECTS) lexer.fail('invalid cross-reference subsection')
    // Each entry takes 20 bytes: a subsection longer than the rest of the file is not one.
    if (count * 20 > bytes.length - lexer.pos) lexer.fail('a cross-reference subsection runs past the end of the file')
    budget.spendEntries(count)
    for (let i = 0; i < count; i++) {
      lexer.skipWhitespace()
      const at = lexer.pos
      const position = lexer.readInteger()
      const gen = lexer.readInteger()
      const kind = lexer.readWord()
      if (kind !== 'n' && kind !== 'f') lexer.fail('invalid cross-reference entry')
      // The first entry for a number wins within a section, as in every reader.
      if (entries.has(first + i)) continue
      entries.set(first + i, kind === 'n' ? { type: 'offset', offset: position, gen } : { type: 'free' })
      if (kind === 'n') entryPositions.set(first + i, at)
    }
  }
  lexer.expectKeyword('trailer')
  const trailer = lexer.readValue()
  if (!(trailer instanceof PdfDict)) lexer.fail('trailer is not a dictionary')
  const section: XrefSection = {
    offset,
    claimedOffset: claimed,
    kind: 'table',
    entries,
    entryPositions,
    trailer,
    end: lexer.pos,
  }
  // A hybrid-reference file lists objects kept in object streams in a side stream for PDF 1.5 readers.
  const side = trailer.get('XRefStm')
  if (typeof side === 'number') {
    const stream = await readXrefStream(bytes, side, side, budget)
    for (const [num, entry] of stream.entries) if (!entries.has(num)) entries.set(num, entry)
  }
  return section
}

async function readXrefStream(
  bytes: Uint8Array,
  offset: number,
  claimed: number,
  budget: ReadBudget,
): Promise<XrefSection> {
  // What the pointer names is judged by its dictionary first: a pointer to anything else (another object, the middle
  // of one) is lost, whatever that object's stream would take to read.
  if (!isXrefStreamAt(bytes, offset)) {
    throw new LostCrossReference(
      `startxref ${offset} points at neither a cross-reference table nor a cross-reference stream`,
    )
  }
  const object = await readIndirectObject(bytes, offset, () => {
    throw damaged(`cross-reference stream at byte ${offset} has an indirect /Length`)
  })
  const dict = object.stream?.dict
  if (!object.stream || !dict) throw damaged(`cross-reference stream at byte ${offset} has no stream`)
  const widths = dict.get('W')
  const size = dict.get('Size')
  if (
    !Array.isArray(widths) ||
    widths.length !== 3 ||
    !widths.every((w) => typeof w === 'number' && Number.isInteger(w) && w >= 0 && w <= 8)
  ) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /W`)
  }
  if (typeof size !== 'number' || size < 0 || size > MAX_OBJECTS) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /Size`)
  }
  const index = dict.get('Index') ?? [0, size]
  if (
    !Array.isArray(index) ||
    index.length % 2 !== 0 ||
    !index.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0)
  ) {
    throw damaged(`cross-reference stream at byte ${offset} has an invalid /Index`)
  }
  const [w0, w1, w2] = widths as [number, number, number]
  const rowLength = w0 + w1 + w2
  // Rows without an offset field say nothing: millions of them cost memory and time, never a document.
  if (w1 === 0) throw damaged(`cross-reference stream at byte ${offset} has no offset field (/W [${widths.join(' ')}])`)
  let declared = 0
  for (let pair = 0; pair < index.length; pair += 2) {
    if ((index[pair] as number) + (index[pair + 1] as number) > MAX_OBJECTS) {
      throw damaged(`cross-reference stream at byte ${offset} has an invalid /Index`)
    }
    declared += index[pair + 1] as number
  }
  budget.spendEntries(declared)
  // Decoded, the stream is one row per entry (plus a PNG predictor's byte per row): never more is needed.
  const limit = declared * (rowLength + 1) + 1024
  const data = await decodeStream(object.stream, budget.decodedLeft(limit))
  budget.spendDecoded(data.length)
  if (data.length < declared * rowLength) throw damaged(`cross-reference stream at byte ${offset} is truncated`)
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
    for (let i = 0; i < count; i++) {
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
  return {
    offset,
    claimedOffset: claimed,
    kind: 'stream',
    entries,
    entryPositions: new Map(),
    trailer: dict,
    end: object.end,
  }
}

/** Whether an indirect object whose dictionary says /Type /XRef starts at `offset`. */
function isXrefStreamAt(bytes: Uint8Array, offset: number): boolean {
  try {
    const dict = objectValueAt(bytes, offset)
    const type = dict instanceof PdfDict ? dict.get('Type') : undefined
    return type instanceof PdfName && type.name === 'XRef'
  } catch {
    // Not an object at all, or none that can be read: no section either.
    return false
  }
}
