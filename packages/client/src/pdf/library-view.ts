// The file as @libpdf/core (the writer of revisions, and the decrypter of encrypted files) should be shown it. The
// library reads strictly or rebuilds the whole file, and a rebuilt file can only be saved whole, which would break
// every signature in it. Files that other readers open anyway (qpdf, pdfsig, PDF.js) are shown to it with what they
// tolerate corrected in place, byte for byte the same length: a `startxref` or `/Prev` a few bytes off its section, a
// cross-reference table entry that misses its object. Offsets in the view are offsets in the original, so a revision
// appended to the view is appended to the original as it is.
import { PdfError } from './pdf-errors.ts'
import { definesObject, type PdfStructure } from './pdf-revisions.ts'

const latin1 = new TextDecoder('latin1')

/** The corrected view; the file itself when nothing needs correcting. */
export function libraryView(structure: PdfStructure): Uint8Array {
  const { bytes, sections } = structure
  let view: Uint8Array | undefined
  const patch = (at: number, width: number, value: number) => {
    const digits = String(value).padStart(width, '0')
    if (digits.length > width) {
      throw new PdfError(
        'ERR_PDF_UNSUPPORTED',
        'a cross-reference pointer of this PDF is off by more digits than can be corrected in place',
      )
    }
    view ??= bytes.slice()
    for (let i = 0; i < width; i++) view[at + i] = digits.charCodeAt(i)
  }
  // Newest first, as the pointers run: the last startxref names the newest section, each section's /Prev the one
  // before it.
  const newestFirst = [...sections].reverse()
  for (const [i, section] of newestFirst.entries()) {
    if (section.offset === section.claimedOffset) continue
    const pointer =
      i === 0 ? lastStartxref(bytes) : prevPointer(bytes, newestFirst[i - 1]!.offset, newestFirst[i - 1]!.end)
    if (!pointer || pointer.value !== section.claimedOffset) continue
    patch(pointer.at, pointer.width, section.offset)
  }
  for (const section of sections) {
    for (const [num, at] of section.entryPositions) {
      const entry = section.entries.get(num)
      if (entry?.type !== 'offset' || definesObject(bytes, entry.offset, num)) continue
      const actual = lastDefinitionBefore(bytes, num, section.offset)
      if (actual !== undefined) patch(at, 10, actual)
    }
  }
  return view ?? bytes
}

interface Pointer {
  at: number
  width: number
  value: number
}

function lastStartxref(bytes: Uint8Array): Pointer | undefined {
  const tail = latin1.decode(bytes.subarray(Math.max(0, bytes.length - 1024)))
  const match = [...tail.matchAll(/startxref\s+(\d+)/g)].at(-1)
  if (!match) return undefined
  const at = bytes.length - tail.length + match.index + match[0].length - match[1]!.length
  return { at, width: match[1]!.length, value: Number(match[1]) }
}

function prevPointer(bytes: Uint8Array, from: number, to: number): Pointer | undefined {
  const text = latin1.decode(bytes.subarray(from, to))
  const match = [...text.matchAll(/\/Prev\s+(\d+)/g)].at(-1)
  if (!match) return undefined
  const at = from + match.index + match[0].length - match[1]!.length
  return { at, width: match[1]!.length, value: Number(match[1]) }
}

/** The last `num G obj` before `end`, as a reconstructing reader takes it. */
function lastDefinitionBefore(bytes: Uint8Array, num: number, end: number): number | undefined {
  const text = latin1.decode(bytes.subarray(0, end))
  let found: number | undefined
  for (const match of text.matchAll(new RegExp(`(?<![^\\s])${num}\\s+\\d+\\s+obj\\b`, 'g'))) found = match.index
  return found
}
