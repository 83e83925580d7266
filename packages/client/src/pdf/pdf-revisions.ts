// Splits a PDF into its incremental revisions (ISO 32000-1, 7.5.6) by following the chain of cross-reference
// sections from the last `startxref` back through `/Prev`, and resolves objects as they were in any revision. Reading
// is bounded by the file's own size (read-budget.ts); an object whose cross-reference entry is wrong is found by
// scanning the file for it, as PDF.js and qpdf do when they reconstruct a damaged table.

import { readXrefSection, SEARCH_WINDOW, type XrefEntry, type XrefSection } from './cross-reference.ts'
import { damaged, LostCrossReference, PdfError } from './pdf-errors.ts'
import {
  type IndirectObject,
  latin1Bytes,
  PdfDict,
  PdfLexer,
  PdfRef,
  type PdfStreamObject,
  type PdfValue,
  readIndirectObject,
} from './pdf-syntax.ts'
import { ReadBudget, tooMuch } from './read-budget.ts'
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
  /** The sections read, oldest first (a revision may span several: a linearized original). */
  sections: XrefSection[]
  /** The trailer's /Encrypt, when the file is encrypted (its streams then need the document's key). */
  encrypt: PdfValue | undefined
  budget: ReadBudget
  /**
   * Objects read at a byte offset whose stream length is direct, shared by the resolvers of every revision: comparing
   * revisions reads most objects once for each.
   */
  parsed: Map<number, IndirectObject>
}

const STARTXREF = latin1Bytes('startxref')
const EOF_MARKER = latin1Bytes('%%EOF')
const PDF_HEADER = latin1Bytes('%PDF-')
/** Producers may put bytes before the header; readers look for it in the first kilobyte. */
const HEADER_WINDOW = 1024
/** More sections than this is a loop or a hostile file rather than a document; fewer for a small file. */
const MAX_SECTIONS = 10_000
/** A cross-reference section with its trailer takes at least this many bytes. */
const MIN_SECTION_BYTES = 40

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

/**
 * The byte past `startxref N %%EOF` (and one end-of-line) that closes the section at `offset`. Its `startxref` may be
 * a few bytes off the section, as readers tolerate (cross-reference.ts).
 */
function findRevisionEnd(bytes: Uint8Array, sectionEnd: number, offset: number): number {
  const at = indexOf(bytes, STARTXREF, sectionEnd)
  if (at < 0) throw damaged(`no startxref after the cross-reference section at byte ${offset}`)
  const lexer = new PdfLexer(bytes, at + STARTXREF.length)
  const pointer = lexer.readInteger()
  if (Math.abs(pointer - offset) > SEARCH_WINDOW) {
    throw damaged(`startxref at byte ${at} says ${pointer}, but its section is at ${offset}`)
  }
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
 * Reads the revision structure. Refuses a file without a PDF header, and a file whose cross-reference chain cannot be
 * followed or asks for more than its size can need.
 */
export async function readPdfStructure(bytes: Uint8Array): Promise<PdfStructure> {
  if (!hasPdfHeader(bytes)) throw new PdfError('ERR_NOT_PDF', 'not a PDF file (no %PDF- header)')
  const budget = new ReadBudget(bytes.length)
  const at = lastIndexOf(bytes, STARTXREF)
  if (at < 0) throw new LostCrossReference('no startxref: the cross-reference table is missing')
  let offset: number = new PdfLexer(bytes, at + STARTXREF.length).readInteger()
  const chain: XrefSection[] = []
  const seen = new Set<number>()
  const maxSections = Math.min(MAX_SECTIONS, Math.max(1, Math.floor(bytes.length / MIN_SECTION_BYTES)))
  for (;;) {
    if (seen.has(offset)) throw damaged('the cross-reference chain loops')
    if (chain.length >= maxSections) throw tooMuch('it chains more revisions than a file of its size can hold')
    seen.add(offset)
    const section = await readXrefSection(bytes, offset, budget)
    if (section.offset !== offset && seen.has(section.offset)) throw damaged('the cross-reference chain loops')
    seen.add(section.offset)
    chain.push(section)
    const prev = section.trailer.get('Prev')
    if (prev === undefined) break
    if (typeof prev !== 'number') throw damaged(`/Prev of the section at byte ${section.offset} is not a number`)
    offset = prev
  }
  const encrypt = chain.find((section) => section.trailer.get('Encrypt') !== undefined)?.trailer.get('Encrypt')
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
  return { bytes, revisions, sections: chain, encrypt, budget, parsed: new Map() }
}

/** Resolves objects as they were when a given revision was written: its own entries first, then older ones. */
export class RevisionResolver {
  private readonly objectStreams = new Map<number, Promise<{ offsets: number[]; data: Uint8Array }>>()
  /** Where each object is defined, found by scanning the file: only built when an entry proves wrong. */
  private scanned: Map<number, number[]> | undefined
  /** Object streams whose own object is being read: a length inside one of them would be a cycle. */
  private readonly loading = new Set<number>()

  /**
   * `decrypted`: the raw data of stream objects of an encrypted file, decrypted with its key (encrypted-pdf.ts); the
   * dictionaries need no key, only strings and streams are encrypted.
   */
  constructor(
    private readonly structure: PdfStructure,
    private readonly revision: number,
    private readonly decrypted?: (num: number, gen: number) => Uint8Array | undefined,
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
      const object = await this.readAt(entry.offset).catch(() => undefined)
      if (object?.num === ref.num) return object
      // The entry is wrong: the object's own "N G obj" line, the last one within the revision, says where it is.
      const end = this.structure.revisions[found.revision]!.end
      const offset = this.definitions(ref.num).findLast((at) => at < end)
      if (offset === undefined) throw damaged(`object ${ref.num} is neither at byte ${entry.offset} nor anywhere else`)
      return this.readAt(offset)
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
    const object = await this.object(ref)
    return object?.stream && this.plain(object.stream, ref.num, object.gen)
  }

  /** A stream's data as its filters expect it: decrypted first in an encrypted file. */
  private plain(stream: PdfStreamObject, num: number, gen: number): PdfStreamObject {
    if (!this.decrypted) return stream
    const data = this.decrypted(num, gen)
    if (!data) throw damaged(`object ${num} cannot be decrypted`)
    return { dict: stream.dict, data }
  }

  private async readAt(offset: number): Promise<IndirectObject> {
    const { parsed } = this.structure
    const known = parsed.get(offset)
    if (known) return known
    // An indirect /Length is read as this revision has it, so only an object without one is the same in every revision.
    let lengthIsDirect = true
    const object = await readIndirectObject(this.structure.bytes, offset, (length) => {
      lengthIsDirect = false
      return this.integer(length)
    })
    if (lengthIsDirect) parsed.set(offset, object)
    return object
  }

  /**
   * A stream's indirect /Length. Read without resolving any further length: a length is a plain number, and one that
   * would need another (or its own) stream's length to be read is a cycle, refused rather than followed.
   */
  private async integer(ref: PdfRef): Promise<number> {
    const found = this.entryOf(ref.num)
    let value: PdfValue | undefined
    if (found?.entry.type === 'offset') {
      const object = await readIndirectObject(this.structure.bytes, found.entry.offset, () => {
        throw damaged(`the /Length of a stream refers to a stream (object ${ref.num})`)
      })
      if (object.num === ref.num) value = object.value
    } else if (found?.entry.type === 'compressed' && !this.loading.has(found.entry.stream)) {
      // In an object stream other than the one being read (whose length that would be: a cycle).
      value = (await this.object(ref))?.value
    }
    if (typeof value !== 'number') throw damaged(`the /Length of a stream is not a number (object ${ref.num})`)
    return value
  }

  /** Offsets of every `N G obj` of object `num` in the file, in file order. */
  private definitions(num: number): number[] {
    if (!this.scanned) {
      this.scanned = new Map()
      const text = new TextDecoder('latin1').decode(this.structure.bytes)
      for (const match of text.matchAll(OBJECT_HEADER)) {
        const n = Number(match[1])
        const list = this.scanned.get(n) ?? []
        list.push(match.index)
        this.scanned.set(n, list)
      }
    }
    return this.scanned.get(num) ?? []
  }

  private objectStream(num: number): Promise<{ offsets: number[]; data: Uint8Array }> {
    let pending = this.objectStreams.get(num)
    if (!pending) {
      pending = (async () => {
        const found = this.entryOf(num)
        if (found?.entry.type !== 'offset') throw damaged(`object stream ${num} is missing`)
        this.loading.add(num)
        const object = await this.readAt(found.entry.offset).finally(() => this.loading.delete(num))
        if (!object.stream) throw damaged(`object ${num} is not an object stream`)
        const n = object.stream.dict.get('N')
        const first = object.stream.dict.get('First')
        if (typeof n !== 'number' || typeof first !== 'number') throw damaged(`object stream ${num} lacks /N or /First`)
        const { budget } = this.structure
        const data = await decodeStream(this.plain(object.stream, num, object.gen), budget.decodedLeft())
        budget.spendDecoded(data.length)
        if (!Number.isInteger(n) || n < 0 || n > data.length) throw damaged(`object stream ${num} has an invalid /N`)
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

/** `N G obj` where a token may start, the object number captured: how a reader that rebuilds the table finds objects. */
export const OBJECT_HEADER = /(?<![^\s])(\d+)\s+\d+\s+obj\b/g

/** Whether object `num`'s `N G obj` starts at `offset` (after white space). */
export function definesObject(bytes: Uint8Array, offset: number, num: number): boolean {
  return new RegExp(`^\\s*${num}\\s+\\d+\\s+obj\\b`).test(
    new TextDecoder('latin1').decode(bytes.subarray(offset, offset + 32)),
  )
}
