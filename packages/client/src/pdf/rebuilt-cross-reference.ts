// A file whose `startxref` (or a /Prev) leads to no cross-reference section is opened all the same by readers that
// rebuild the cross-reference data by scanning the file for its objects and its trailer: MuPDF, and qpdf and poppler
// when they find a `trailer` keyword (a file of cross-reference streams has none). Signing such a file rebuilds the
// data the same way and writes it as a revision of its own after the file's last byte: one section listing every
// object where the scan found it, the trailer's /Root, /Info and /ID, and no /Prev into the broken data. The original
// bytes stay as they are, in front of it; every reader, ours included, then reads the file strictly through the
// rebuilt section, and the signature appended after it covers both. The scan is the one those readers make: the last
// `N G obj` of a number in the file wins, stream data is skipped (a header inside a content stream is not an object),
// and objects kept in object streams are listed from the streams themselves.

import { toHex } from '../formats/hex.ts'
import { damaged, type LostCrossReference, PdfError } from './pdf-errors.ts'
import {
  latin1Bytes,
  objectValueAt,
  PdfDict,
  PdfLexer,
  PdfName,
  PdfRef,
  PdfString,
  readIndirectObject,
} from './pdf-syntax.ts'
import { ReadBudget } from './read-budget.ts'
import { decodeStream } from './stream-filters.ts'

type Entry = { type: 'offset'; offset: number; gen: number } | { type: 'compressed'; stream: number; index: number }

interface Definition {
  offset: number
  gen: number
}

interface Scan {
  /** The last `N G obj` of each object number. */
  objects: Map<number, Definition>
  /** Objects whose dictionary says /Type /ObjStm. */
  objectStreams: { num: number; offset: number }[]
  /** Where each trailer dictionary starts, in file order: after `trailer`, or a cross-reference stream's object. */
  trailers: { at: number; kind: 'trailer' | 'stream' }[]
  /** Objects whose dictionary says /Type /Catalog, in file order: the root when no trailer names one. */
  catalogs: { num: number; offset: number }[]
  /** Whether a signature's /ByteRange is anywhere outside stream data. */
  signed: boolean
  /** Whether /Encrypt is anywhere outside stream data: a trailer says so, even one no longer found whole. */
  encrypted: boolean
}

/** The largest object number and generation a cross-reference entry can hold (ISO 32000-1, 7.5.4). */
const MAX_OBJECT_NUMBER = 8_388_607
const MAX_GENERATION = 65_535
/** Headers, the `stream` keyword (whose data is then skipped), trailers, catalogs, signatures and encryption. */
const LANDMARKS =
  /(?<![^\s])(\d+)\s+(\d+)\s+obj\b|\bstream(?=[\r\n])|\btrailer\b|\/Type\s*\/Catalog\b|\/ByteRange\b|\/Encrypt\b/g
const latin1 = new TextDecoder('latin1')

/**
 * The file with a revision appended that rebuilds its lost cross-reference data. A file that holds signatures is
 * refused: one rebuilt section would merge the revisions they signed and hide what each one covered. So is an
 * encrypted file: its object streams could not be listed without its key.
 */
export async function withRebuiltCrossReference(bytes: Uint8Array, lost: LostCrossReference): Promise<Uint8Array> {
  const scan = scanFile(bytes)
  if (scan.signed) {
    throw new PdfError(
      'ERR_PDF_DAMAGED',
      `${lost.message}; it is not rebuilt, because the file holds signatures: one rebuilt section would hide the ` +
        'revisions they signed',
    )
  }
  if (scan.encrypted) {
    throw new PdfError('ERR_PDF_DAMAGED', `${lost.message}; it is not rebuilt, because the file is encrypted`)
  }
  const entries = await entriesOf(bytes, scan)
  const trailer = trailerOf(bytes, scan, entries)
  const root = trailer?.get('Root') ?? lastCatalog(bytes, scan)
  if (!(root instanceof PdfRef)) {
    throw new PdfError(
      'ERR_PDF_DAMAGED',
      `${lost.message}; it cannot be rebuilt either: no document catalog is found in the file`,
    )
  }
  const info = trailer?.get('Info')
  const id = trailer?.get('ID')
  const fields = [
    `/Root ${reference(root)}`,
    ...(info instanceof PdfRef ? [`/Info ${reference(info)}`] : []),
    ...(Array.isArray(id) && id.length === 2 && id.every((part) => part instanceof PdfString)
      ? [`/ID [${id.map((part) => `<${toHex(part.bytes)}>`).join(' ')}]`]
      : []),
  ].join(' ')
  // The section starts on a line of its own.
  const separator = bytes[bytes.length - 1] === 0x0a || bytes[bytes.length - 1] === 0x0d ? '' : '\n'
  const at = bytes.length + separator.length
  const compressed = [...entries.values()].some((entry) => entry.type === 'compressed')
  const section = compressed ? xrefStream(entries, at, fields) : xrefTable(entries, at, fields)
  const out = new Uint8Array(at + section.length)
  out.set(bytes)
  out.set(latin1Bytes(separator), bytes.length)
  out.set(section, at)
  return out
}

function scanFile(bytes: Uint8Array): Scan {
  const text = latin1.decode(bytes)
  const scan: Scan = {
    objects: new Map(),
    objectStreams: [],
    trailers: [],
    catalogs: [],
    signed: false,
    encrypted: false,
  }
  const landmarks = new RegExp(LANDMARKS)
  let header: { num: number; offset: number } | undefined
  for (let match = landmarks.exec(text); match; match = landmarks.exec(text)) {
    const [word, number, generation] = match
    if (number !== undefined) {
      const num = Number(number)
      const gen = Number(generation)
      if (num < 1 || num > MAX_OBJECT_NUMBER || gen > MAX_GENERATION) continue
      header = { num, offset: match.index }
      scan.objects.set(num, { offset: match.index, gen })
    } else if (word === 'stream') {
      const dict = header ? text.slice(header.offset, match.index) : ''
      if (header && /\/Type\s*\/ObjStm\b/.test(dict)) scan.objectStreams.push(header)
      if (header && /\/Type\s*\/XRef\b/.test(dict)) scan.trailers.push({ at: header.offset, kind: 'stream' })
      const end = text.indexOf('endstream', landmarks.lastIndex)
      if (end < 0) break
      landmarks.lastIndex = end + 'endstream'.length
    } else if (word === 'trailer') scan.trailers.push({ at: landmarks.lastIndex, kind: 'trailer' })
    else if (word === '/ByteRange') scan.signed = true
    else if (word === '/Encrypt') scan.encrypted = true
    else if (header) scan.catalogs.push(header)
  }
  return scan
}

/** Every object's entry: in file order, later wins, an object stream's objects counting where the stream is. */
async function entriesOf(bytes: Uint8Array, scan: Scan): Promise<Map<number, Entry>> {
  const found: { at: number; num: number; entry: Entry }[] = []
  for (const [num, { offset, gen }] of scan.objects)
    found.push({ at: offset, num, entry: { type: 'offset', offset, gen } })
  const budget = new ReadBudget(bytes.length)
  for (const { num, offset } of scan.objectStreams) {
    // An object stream replaced by a later one of its number holds nothing any more.
    if (scan.objects.get(num)?.offset !== offset) continue
    for (const [index, member] of (await objectStreamMembers(bytes, scan, offset, budget)).entries()) {
      if (member < 1 || member > MAX_OBJECT_NUMBER || member === num) continue
      found.push({ at: offset, num: member, entry: { type: 'compressed', stream: num, index } })
    }
  }
  found.sort((a, b) => a.at - b.at)
  return new Map(found.map(({ num, entry }) => [num, entry]))
}

/** The object numbers an object stream holds, in its order. */
async function objectStreamMembers(bytes: Uint8Array, scan: Scan, offset: number, budget: ReadBudget) {
  const object = await readIndirectObject(bytes, offset, async (ref) => {
    const definition = scan.objects.get(ref.num)
    const length =
      definition &&
      (
        await readIndirectObject(bytes, definition.offset, () => {
          throw damaged(`the /Length of the object stream at byte ${offset} refers to a stream`)
        })
      ).value
    if (typeof length !== 'number') throw damaged(`the /Length of object stream at byte ${offset} is not a number`)
    return length
  })
  const n = object.stream?.dict.get('N')
  if (!object.stream || typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
    throw damaged(`object stream ${object.num} lacks a valid /N`)
  }
  const data = await decodeStream(object.stream, budget.decodedLeft())
  budget.spendDecoded(data.length)
  if (n > data.length) throw damaged(`object stream ${object.num} has an invalid /N`)
  const lexer = new PdfLexer(data)
  const members: number[] = []
  for (let i = 0; i < n; i++) {
    members.push(lexer.readInteger())
    lexer.readInteger()
  }
  return members
}

/** The last trailer dictionary whose /Root is an object the file defines. */
function trailerOf(bytes: Uint8Array, scan: Scan, entries: Map<number, Entry>): PdfDict | undefined {
  for (const { at, kind } of [...scan.trailers].reverse()) {
    try {
      const dict = kind === 'stream' ? objectValueAt(bytes, at) : new PdfLexer(bytes, at).readValue()
      const root = dict instanceof PdfDict ? dict.get('Root') : undefined
      if (root instanceof PdfRef && entries.has(root.num)) return dict as PdfDict
    } catch {
      // A damaged trailer is passed over, as the readers that rebuild do: an earlier one may still name the root.
    }
  }
  return undefined
}

/** The last catalog that is its number's last definition: the root of a file whose trailers are all lost. */
function lastCatalog(bytes: Uint8Array, scan: Scan): PdfRef | undefined {
  for (const { num, offset } of [...scan.catalogs].reverse()) {
    const definition = scan.objects.get(num)
    if (definition?.offset !== offset) continue
    try {
      const dict = objectValueAt(bytes, offset)
      const type = dict instanceof PdfDict ? dict.get('Type') : undefined
      if (type instanceof PdfName && type.name === 'Catalog') return new PdfRef(num, definition.gen)
    } catch {
      // Not a readable catalog: an earlier one may be.
    }
  }
  return undefined
}

const reference = (ref: PdfRef) => `${ref.num} ${ref.gen} R`

/** Consecutive runs of the listed numbers and object 0 (the head of the free list), as [first, count] pairs. */
function runs(entries: Map<number, Entry>): [number, number][] {
  const out: [number, number][] = []
  for (const num of [0, ...[...entries.keys()].sort((a, b) => a - b)]) {
    const last = out.at(-1)
    if (last && last[0] + last[1] === num) last[1]++
    else out.push([num, 1])
  }
  return out
}

/** A cross-reference table (a file without object streams), its trailer and `startxref`. */
function xrefTable(entries: Map<number, Entry>, at: number, fields: string): Uint8Array {
  const size = Math.max(0, ...entries.keys()) + 1
  let text = 'xref\n'
  for (const [first, count] of runs(entries)) {
    text += `${first} ${count}\n`
    for (let num = first; num < first + count; num++) {
      const entry = entries.get(num)
      text +=
        entry?.type === 'offset'
          ? `${String(entry.offset).padStart(10, '0')} ${String(entry.gen).padStart(5, '0')} n\r\n`
          : '0000000000 65535 f\r\n'
    }
  }
  text += `trailer\n<< /Size ${size} ${fields} >>\nstartxref\n${at}\n%%EOF\n`
  return latin1Bytes(text)
}

/** A cross-reference stream, the only section that can point into object streams, and its `startxref`. */
function xrefStream(entries: Map<number, Entry>, at: number, fields: string): Uint8Array {
  const self = Math.max(0, ...entries.keys()) + 1
  const listed = new Map(entries).set(self, { type: 'offset', offset: at, gen: 0 })
  const index = runs(listed)
  // One byte of type, four of offset (or object stream), four of generation (or index within the stream).
  const rows = new Uint8Array(index.reduce((sum, [, count]) => sum + count, 0) * 9)
  const view = new DataView(rows.buffer)
  let row = 0
  for (const [first, count] of index) {
    for (let num = first; num < first + count; num++, row += 9) {
      const entry = listed.get(num)
      if (entry?.type === 'offset') view.setUint8(row, 1)
      if (entry?.type === 'compressed') view.setUint8(row, 2)
      view.setUint32(row + 1, entry?.type === 'offset' ? entry.offset : (entry?.stream ?? 0))
      view.setUint32(row + 5, entry?.type === 'offset' ? entry.gen : (entry?.index ?? MAX_GENERATION))
    }
  }
  const head = latin1Bytes(
    `${self} 0 obj\n<< /Type /XRef /Size ${self + 1} /W [1 4 4] /Index [${index.flat().join(' ')}] ${fields} ` +
      `/Length ${rows.length} >>\nstream\n`,
  )
  const tail = latin1Bytes(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`)
  const out = new Uint8Array(head.length + rows.length + tail.length)
  out.set(head)
  out.set(rows, head.length)
  out.set(tail, head.length + rows.length)
  return out
}
