// Splits a PDF into its incremental revisions (ISO 32000-1, 7.5.6) by following the chain of cross-reference
// sections from the last `startxref` back through `/Prev`, and resolves objects as they were in any revision.

import { readXrefSection, type XrefEntry, type XrefSection } from './cross-reference.ts'
import { damaged, PdfError } from './pdf-errors.ts'
import {
  type IndirectObject,
  PdfDict,
  PdfLexer,
  PdfRef,
  type PdfStreamObject,
  type PdfValue,
  readIndirectObject,
} from './pdf-syntax.ts'
import { decodeStream } from './stream-filters.ts'

export interface PdfRevision {
  /** 0 for the original file, then 1, 2, ... for each incremental update. */
  index: number
  /** First byte of the revision: 0, or the byte just past the previous revision's end. */
  start: number
  /** Byte just past the revision's `%%EOF` marker and the end-of-line that follows it, if any. */
  end: number
  /** Offset of the revision's (newest) cross-reference section: the value of its `startxref`. */
  xrefOffset: number
  xrefKind: 'table' | 'stream'
  trailer: PdfDict
  /** Cross-reference entries of this revision alone (earlier revisions hold the rest). */
  entries: Map<number, XrefEntry>
}

export interface PdfStructure {
  bytes: Uint8Array
  revisions: PdfRevision[]
}

const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))
const STARTXREF = ascii('startxref')
const EOF_MARKER = ascii('%%EOF')
const PDF_HEADER = ascii('%PDF-')
/** Producers may put bytes before the header; readers look for it in the first kilobyte. */
const HEADER_WINDOW = 1024
/** More sections than this is a loop or a hostile file rather than a document. */
const MAX_SECTIONS = 10_000

function indexOf(bytes: Uint8Array, needle: Uint8Array, from: number, to = bytes.length): number {
  outer: for (let i = from; i <= to - needle.length; i++) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

function lastIndexOf(bytes: Uint8Array, needle: Uint8Array): number {
  outer: for (let i = bytes.length - needle.length; i >= 0; i--) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer
    return i
  }
  return -1
}

export function hasPdfHeader(bytes: Uint8Array): boolean {
  const at = indexOf(bytes, PDF_HEADER, 0, Math.min(bytes.length, HEADER_WINDOW + PDF_HEADER.length))
  return at >= 0
}

/** The byte past `startxref N %%EOF` (and one end-of-line) that closes the section starting at `offset`. */
function findRevisionEnd(bytes: Uint8Array, sectionEnd: number, offset: number): number {
  const at = indexOf(bytes, STARTXREF, sectionEnd)
  if (at < 0) throw damaged(`no startxref after the cross-reference section at byte ${offset}`)
  const lexer = new PdfLexer(bytes, at + STARTXREF.length)
  const pointer = lexer.readInteger()
  if (pointer !== offset) throw damaged(`startxref at byte ${at} says ${pointer}, but its section is at ${offset}`)
  while (lexer.pos < bytes.length && [0x00, 0x09, 0x0a, 0x0c, 0x0d, 0x20].includes(bytes[lexer.pos]!)) lexer.pos++
  if (indexOf(bytes, EOF_MARKER, lexer.pos, lexer.pos + EOF_MARKER.length) !== lexer.pos) {
    throw damaged(`no %%EOF after the startxref at byte ${at}`)
  }
  let end = lexer.pos + EOF_MARKER.length
  if (bytes[end] === 0x0d) end++
  if (bytes[end] === 0x0a) end++
  return end
}

/**
 * Reads the revision structure. Refuses a file without a PDF header, an encrypted file, and a file whose
 * cross-reference chain cannot be followed.
 */
export async function readPdfStructure(bytes: Uint8Array): Promise<PdfStructure> {
  if (!hasPdfHeader(bytes)) throw new PdfError('ERR_NOT_PDF', 'not a PDF file (no %PDF- header)')
  const at = lastIndexOf(bytes, STARTXREF)
  if (at < 0) throw damaged('no startxref: the cross-reference table is missing')
  let offset: number = new PdfLexer(bytes, at + STARTXREF.length).readInteger()
  const chain: XrefSection[] = []
  const seen = new Set<number>()
  for (;;) {
    if (seen.has(offset) || chain.length >= MAX_SECTIONS) throw damaged('the cross-reference chain loops')
    seen.add(offset)
    const section = await readXrefSection(bytes, offset)
    chain.push(section)
    const prev = section.trailer.get('Prev')
    if (prev === undefined) break
    if (typeof prev !== 'number') throw damaged(`/Prev of the section at byte ${offset} is not a number`)
    offset = prev
  }
  if (chain.some((section) => section.trailer.get('Encrypt') !== undefined)) {
    throw new PdfError('ERR_PDF_ENCRYPTED', 'the PDF is encrypted')
  }
  chain.reverse()
  // Sections normally grow towards the end of the file. A linearized original has a first-page section near the
  // start whose /Prev points forward: everything up to the last such jump forms revision 0.
  let base = 0
  for (let i = 1; i < chain.length; i++) if (chain[i]!.offset < chain[i - 1]!.offset) base = i
  const groups: XrefSection[][] = [chain.slice(0, base + 1), ...chain.slice(base + 1).map((section) => [section])]
  const revisions: PdfRevision[] = []
  let start = 0
  for (const [index, group] of groups.entries()) {
    const newest = group[group.length - 1]!
    const entries = new Map<number, XrefEntry>()
    for (const section of [...group].reverse()) {
      for (const [num, entry] of section.entries) if (!entries.has(num)) entries.set(num, entry)
    }
    const last = group.reduce((a, b) => (b.end > a.end ? b : a))
    // In a linearized file the startxref after the main section points back at the first-page section.
    const end = findRevisionEnd(bytes, last.end, newest.offset)
    if (newest.offset < start || end <= start) throw damaged(`revision ${index} overlaps the revision before it`)
    revisions.push({
      index,
      start,
      end,
      xrefOffset: newest.offset,
      xrefKind: newest.kind,
      trailer: newest.trailer,
      entries,
    })
    start = end
  }
  return { bytes, revisions }
}

/** Resolves objects as they were when a given revision was written: its own entries first, then older ones. */
export class RevisionResolver {
  private readonly objectStreams = new Map<number, Promise<{ offsets: number[]; data: Uint8Array }>>()

  constructor(
    private readonly structure: PdfStructure,
    private readonly revision: number,
  ) {}

  entryOf(num: number): { entry: XrefEntry; revision: number } | undefined {
    for (let r = this.revision; r >= 0; r--) {
      const entry = this.structure.revisions[r]!.entries.get(num)
      if (entry) return { entry, revision: r }
    }
    return undefined
  }

  async resolve(value: PdfValue | undefined): Promise<PdfValue | undefined> {
    if (!(value instanceof PdfRef)) return value
    return (await this.object(value))?.value ?? null
  }

  /** The object a reference points to, with its stream if it is one; undefined for free or missing objects. */
  async object(ref: PdfRef): Promise<IndirectObject | undefined> {
    const found = this.entryOf(ref.num)
    if (!found || found.entry.type === 'free') return undefined
    const { entry } = found
    if (entry.type === 'offset') {
      const object = await readIndirectObject(this.structure.bytes, entry.offset, (length) => this.integer(length))
      if (object.num !== ref.num) throw damaged(`object ${ref.num} is not at byte ${entry.offset}`)
      return object
    }
    const stream = await this.objectStream(entry.stream)
    const offset = stream.offsets[entry.index * 2 + 1]
    if (stream.offsets[entry.index * 2] !== ref.num || offset === undefined) {
      throw damaged(`object ${ref.num} is not in object stream ${entry.stream}`)
    }
    const lexer = new PdfLexer(stream.data, offset)
    return { num: ref.num, gen: 0, value: lexer.readValue(), end: lexer.pos }
  }

  async stream(ref: PdfRef): Promise<PdfStreamObject | undefined> {
    return (await this.object(ref))?.stream
  }

  private async integer(ref: PdfRef): Promise<number> {
    const value = (await this.object(ref))?.value
    if (typeof value !== 'number') throw damaged(`object ${ref.num} should be a stream length`)
    return value
  }

  private objectStream(num: number): Promise<{ offsets: number[]; data: Uint8Array }> {
    let pending = this.objectStreams.get(num)
    if (!pending) {
      pending = (async () => {
        const found = this.entryOf(num)
        if (found?.entry.type !== 'offset') throw damaged(`object stream ${num} is missing`)
        const object = await readIndirectObject(this.structure.bytes, found.entry.offset, (length) =>
          this.integer(length),
        )
        if (!object.stream) throw damaged(`object ${num} is not an object stream`)
        const n = object.stream.dict.get('N')
        const first = object.stream.dict.get('First')
        if (typeof n !== 'number' || typeof first !== 'number') throw damaged(`object stream ${num} lacks /N or /First`)
        const data = await decodeStream(object.stream)
        const header = new PdfLexer(data)
        const offsets: number[] = []
        for (let i = 0; i < n; i++) offsets.push(header.readInteger(), first + header.readInteger())
        return { offsets, data }
      })()
      this.objectStreams.set(num, pending)
    }
    return pending
  }
}

export const isDict = (value: PdfValue | undefined): value is PdfDict => value instanceof PdfDict
