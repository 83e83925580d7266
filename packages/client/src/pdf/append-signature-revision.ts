// Appends one signature's incremental revision to a PDF: the QR code stamped on a page and the version 2 metadata
// stream listing every signature so far, referenced from the catalog. Earlier bytes are never touched, so every
// earlier signature's document hash still matches its prefix. @libpdf/core writes the update (objects, then a
// cross-reference section of the original's kind with /Prev); it runs on Web APIs as well.

import { PDF, PDFImage, PdfName, PdfNumber, type PdfRef } from '@libpdf/core'
import QRCode from 'qrcode'
import { type PdfSignature, writePdfMetadata } from '../formats/pdf-metadata.ts'
import { PdfError } from './pdf-errors.ts'
import { METADATA_CATALOG_KEY, METADATA_STREAM_TYPE, readSignedPdf, type SignedPdf } from './read-signed-pdf.ts'

export interface StampPlacement {
  /** 1-based page number; default 1. */
  page?: number
  /** Lower-left corner in points from the page's lower-left corner; default: bottom right, left of earlier stamps. */
  x?: number
  y?: number
  /** Side of the square QR code in points; default 96 (about 34 mm). */
  size?: number
}

export interface StampRect {
  page: number
  x: number
  y: number
  size: number
}

export interface PreparedSignatureRevision {
  /** What the file holds already: its revisions and the signatures of its latest metadata. */
  existing: SignedPdf
  /** The signatures already listed, oldest first. */
  signatures: PdfSignature[]
  /** Where the QR code will go. */
  stamp: StampRect
  /** Writes the revision; returns the whole new file (the input bytes, then the revision). */
  write(input: { qrUrl: string; signatures: readonly PdfSignature[] }): Promise<Uint8Array>
}

export const DEFAULT_STAMP_SIZE = 96
const STAMP_MARGIN = 24
const STAMP_GAP = 8
/** Quiet zone around the code, in modules, as ISO/IEC 18004 asks for. */
const QUIET_ZONE = 4

/** A QR code as a 1-bit DeviceGray image, one pixel per module: crisp at any size and a few hundred bytes. */
function qrImage(text: string): { width: number; data: Uint8Array } {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'M' })
  const width = modules.size + 2 * QUIET_ZONE
  const rowBytes = Math.ceil(width / 8)
  // Bit 1 is white in DeviceGray; start all white and clear the dark modules.
  const data = new Uint8Array(rowBytes * width).fill(0xff)
  for (let row = 0; row < modules.size; row++) {
    for (let col = 0; col < modules.size; col++) {
      if (!modules.get(row, col)) continue
      const y = row + QUIET_ZONE
      const x = col + QUIET_ZONE
      data[y * rowBytes + (x >> 3)]! &= ~(0x80 >> (x & 7))
    }
  }
  return { width, data }
}

function defaultStamp(box: { x: number; y: number; width: number; height: number }, size: number, earlier: number) {
  const perRow = Math.max(1, Math.floor((box.width - 2 * STAMP_MARGIN + STAMP_GAP) / (size + STAMP_GAP)))
  const column = earlier % perRow
  const row = Math.floor(earlier / perRow)
  return {
    x: box.x + box.width - STAMP_MARGIN - size - column * (size + STAMP_GAP),
    y: box.y + STAMP_MARGIN + row * (size + STAMP_GAP),
  }
}

async function loadForUpdate(bytes: Uint8Array): Promise<PDF> {
  let pdf: PDF
  try {
    pdf = await PDF.load(bytes, { lenient: false })
  } catch (error) {
    throw new PdfError('ERR_PDF_DAMAGED', `the PDF cannot be parsed: ${(error as Error).message}`)
  }
  const blocker = pdf.canSaveIncrementally()
  if (blocker !== null)
    throw new PdfError('ERR_PDF_UNSUPPORTED', `the PDF library cannot append a revision to it (${blocker})`)
  return pdf
}

/**
 * Checks that a signature revision can be appended to `bytes` at `placement`, before anything irreversible (the
 * anchor transaction) happens. Throws `PdfError` for files that are not PDFs, encrypted, damaged or unsupported,
 * and for a page that does not exist.
 */
export async function prepareSignatureRevision(
  bytes: Uint8Array,
  placement: StampPlacement = {},
): Promise<PreparedSignatureRevision> {
  const existing = await readSignedPdf(bytes)
  const latest = existing.revisions.findLast((revision) => revision.metadata !== null)
  const signatures = latest?.metadata?.signatures ?? []
  const probe = await loadForUpdate(bytes)
  const pageNumber = placement.page ?? 1
  const pageCount = probe.getPageCount()
  if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > pageCount) {
    throw new PdfError('ERR_PDF_UNSUPPORTED', `page ${pageNumber} does not exist (the PDF has ${pageCount})`)
  }
  const size = placement.size ?? DEFAULT_STAMP_SIZE
  const box = probe.getPage(pageNumber - 1)!.getCropBox()
  const fallback = defaultStamp(box, size, signatures.length)
  const stamp = { page: pageNumber, x: placement.x ?? fallback.x, y: placement.y ?? fallback.y, size }

  return {
    existing,
    signatures,
    stamp,
    async write({ qrUrl, signatures: all }) {
      const json = writePdfMetadata({ signatures: all })
      // A fresh load: the probe must not carry state into the update.
      const pdf = await loadForUpdate(bytes)
      const qr = qrImage(qrUrl)
      const imageRef: PdfRef = pdf.createStream(
        {
          Type: PdfName.of('XObject'),
          Subtype: PdfName.of('Image'),
          Width: PdfNumber.of(qr.width),
          Height: PdfNumber.of(qr.width),
          ColorSpace: PdfName.of('DeviceGray'),
          BitsPerComponent: PdfNumber.of(1),
        },
        qr.data,
      )
      pdf.getPage(stamp.page - 1)!.drawImage(new PDFImage(imageRef, qr.width, qr.width), {
        x: stamp.x,
        y: stamp.y,
        width: stamp.size,
        height: stamp.size,
      })
      const metadataRef = pdf.createStream({ Type: PdfName.of(METADATA_STREAM_TYPE) }, new TextEncoder().encode(json))
      pdf.getCatalog().set(METADATA_CATALOG_KEY, metadataRef)
      const out = await pdf.save({ incremental: true })
      // The library falls back to a full rewrite when it cannot append; a rewrite would break every signature.
      if (out.length <= bytes.length || !bytes.every((byte, i) => out[i] === byte)) {
        throw new PdfError('ERR_PDF_UNSUPPORTED', 'the PDF library rewrote the file instead of appending a revision')
      }
      return out
    },
  }
}
