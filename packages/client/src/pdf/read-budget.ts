// What reading one file may cost, bounded by the file's own size: a few kilobytes can claim gigabytes of decompressed
// data or millions of cross-reference entries (a "zip bomb" of a PDF). Every decoded byte and every entry is counted
// against the budget; a file that asks for more is damaged, and its message says so in a user's words.
import { PdfError } from './pdf-errors.ts'

/**
 * The largest file read at all: the whole file is held in memory, and every other bound below grows with its size.
 * Scanned contracts of a few hundred pages stay well under it.
 */
export const MAX_PDF_BYTES = 100 * 1024 * 1024
/** Decompressed bytes a reading may produce, per byte of the file; and a floor for small files. */
const DECODED_PER_FILE_BYTE = 32
const MIN_DECODED_BYTES = 16 * 1024 * 1024
const MAX_DECODED_BYTES = 256 * 1024 * 1024
/** Cross-reference entries a file may declare, per byte of it (each object takes several bytes); and a floor. */
const ENTRIES_PER_FILE_BYTE = 1
const MIN_ENTRIES = 4096
/** The signature metadata of even thousands of signatures fits in this, decoded. */
export const MAX_METADATA_BYTES = 4 * 1024 * 1024

export class ReadBudget {
  private decoded: number
  private entries: number

  constructor(fileLength: number) {
    this.decoded = Math.min(MAX_DECODED_BYTES, Math.max(MIN_DECODED_BYTES, fileLength * DECODED_PER_FILE_BYTE))
    this.entries = Math.max(MIN_ENTRIES, fileLength * ENTRIES_PER_FILE_BYTE)
  }

  /** How many more decompressed bytes may be produced (never more than `cap`). */
  decodedLeft(cap = Number.POSITIVE_INFINITY): number {
    return Math.min(cap, this.decoded)
  }

  spendDecoded(bytes: number): void {
    this.decoded -= bytes
    if (this.decoded < 0) throw tooMuch('its compressed data expands to far more than a file of its size can hold')
  }

  spendEntries(count: number): void {
    this.entries -= count
    if (this.entries < 0) throw tooMuch('it declares far more objects than a file of its size can hold')
  }
}

export function tooMuch(why: string): Error {
  return new PdfError('ERR_PDF_DAMAGED', `the PDF is damaged or hostile: ${why}`)
}
