// Appends one signature's incremental revision to a PDF: a PDF signature (PAdES) whose field's widget shows the QR
// code on a page (signature-field.ts), and the version 2 metadata stream listing every signature so far, referenced
// from the catalog; the signature covers the whole file up to the revision's end, metadata included. Earlier bytes
// are never touched, so every earlier signature's document hash still matches its prefix and every earlier PDF
// signature stays valid. @libpdf/core writes the update (objects, then a cross-reference section of the original's
// kind with /Prev); it runs on Web APIs as well.

import { type PDF, PdfName } from '@libpdf/core'
import { type PdfSignature, writePdfMetadata } from '../formats/pdf-metadata.ts'
import { signatureStructureProblem } from './check-pdf-signatures.ts'
import { openWithLibrary } from './encrypted-pdf.ts'
import { drawFormAppearances, needsAppearances, UNDRAWN_CODE_WARNING } from './form-appearances.ts'
import {
  boxOf,
  type DisplayedStamp,
  defaultPlace,
  outsidePage,
  type PageGeometry,
  placeStamp,
  rotationOf,
  visibleBox,
} from './page-geometry.ts'
import { LostCrossReference, PdfError } from './pdf-errors.ts'
import {
  METADATA_CATALOG_KEY,
  METADATA_STREAM_TYPE,
  type ReadSignedPdfOptions,
  readSignedPdfForUpdate,
  type SignedPdf,
} from './read-signed-pdf.ts'
import { withRebuiltCrossReference } from './rebuilt-cross-reference.ts'
import { describeStructureProblem } from './revision-structure.ts'
import { changedAfterSigning, changesAfter, signedRevisions } from './signature-changes.ts'
import { addSignatureField } from './signature-field.ts'
import { placeSignature } from './signature-placeholder.ts'
import { captionLines, qrModules, stampLayout } from './stamp-appearance.ts'

export interface StampPlacement {
  /** 1-based page number; default 1. */
  page?: number
  /**
   * The stamp's lower-left corner (its caption's, under the code) in points from the lower-left corner of the page as
   * a reader shows it (its visible box, turned by its /Rotate); default: bottom right, left of earlier stamps.
   */
  x?: number
  y?: number
  /** Side of the square QR code in points, from MIN_STAMP_SIZE to MAX_STAMP_SIZE; default 96 (about 34 mm). */
  size?: number
}

/**
 * Where the stamp went: page, lower-left corner as the page is shown (see StampPlacement), the code's side, and the
 * stamp's height (the code and, under it, its caption).
 */
export interface StampRect {
  page: number
  x: number
  y: number
  size: number
  height: number
}

export interface PreparedSignatureRevision {
  /**
   * What the revision is appended to, and so what the signature's document hash is of: the file, or the file and a
   * revision rebuilding its lost cross-reference data (rebuilt-cross-reference.ts). The file's bytes start it.
   */
  base: Uint8Array
  /** What the file holds already: its revisions and the signatures of its latest metadata. */
  existing: SignedPdf
  /** The signatures already listed, oldest first. */
  signatures: PdfSignature[]
  /** Where the QR code will go. */
  stamp: StampRect
  /** What a person should know of how the revision will show (see form-appearances.ts). */
  warnings: string[]
  /** Writes the revision; returns the whole new file (the base, then the revision). */
  write(input: SignatureRevisionInput): Promise<Uint8Array>
}

export interface SignatureRevisionInput {
  qrUrl: string
  /** Every signature so far, this one last: the revision's metadata. */
  signatures: readonly PdfSignature[]
  /** The PDF signature's /Name, /Reason and /M. */
  signerName: string
  reason: string
  time: Date
  /** Signs the SHA-256 of the revision's byte range; resolves with the CMS (DER) for /Contents. */
  sign(digest: Uint8Array): Promise<Uint8Array>
}

export const DEFAULT_STAMP_SIZE = 96
/** Below this a phone camera no longer reads the code from paper; above it the code is a poster. */
export const MIN_STAMP_SIZE = 36
export const MAX_STAMP_SIZE = 1000
const STAMP_MARGIN = 24
const STAMP_GAP = 8
export async function loadForUpdate(view: Uint8Array, password: string | undefined): Promise<PDF> {
  const { document } = await openWithLibrary(view, password)
  const blocker = document.canSaveIncrementally()
  if (blocker !== null)
    throw new PdfError('ERR_PDF_UNSUPPORTED', `the PDF library cannot append a revision to it (${blocker})`)
  return document
}

/**
 * What the library appended to `view` (library-view.ts), appended to `input` itself, which it leaves untouched: the
 * view's offsets are the original's. The library falls back to a full rewrite when it cannot append; a rewrite would
 * break every signature, so it is refused.
 */
export function appendedTo(input: Uint8Array, view: Uint8Array, out: Uint8Array): Uint8Array {
  if (out.length <= view.length || !view.every((byte, i) => out[i] === byte)) {
    throw new PdfError('ERR_PDF_UNSUPPORTED', 'the PDF library rewrote the file instead of appending to it')
  }
  const appended = new Uint8Array(input.length + out.length - view.length)
  appended.set(input)
  appended.set(out.subarray(view.length), input.length)
  return appended
}

/** The page's visible box and rotation, as the library reads its (inherited) boxes and /Rotate. */
function geometryOf(pdf: PDF, pageNumber: number): PageGeometry {
  const page = pdf.getPage(pageNumber - 1)!
  return { box: visibleBox(boxOf(page.getMediaBox()), boxOf(page.getCropBox())), rotation: rotationOf(page.rotation) }
}

export interface PrepareOptions extends ReadSignedPdfOptions {}

/**
 * A signature added to a file whose earlier signatures no longer hold would lend its signer's name to a document
 * nobody signed as it is shown; a file certified against any change would lose its certification.
 */
export function refuseChangedAfterSigning(existing: SignedPdf): void {
  const broken: string[] = []
  for (const signed of signedRevisions(existing)) {
    const changes = changesAfter(existing, signed)
    if (changes.length > 0) broken.push(changedAfterSigning(signed, changes, signed.signer))
  }
  broken.push(...existing.structureProblems.map(describeStructureProblem))
  for (const field of existing.pdfSignatures) {
    const problem = signatureStructureProblem(existing, field)
    if (problem) broken.push(`the PDF signature of revision ${field.revision} is broken: ${problem}`)
  }
  if (broken.length > 0) {
    throw new PdfError('ERR_PDF_MODIFIED', `the PDF was changed after it was signed: ${broken.join('; ')}`)
  }
  if (existing.certification?.permissions === 1) {
    throw new PdfError(
      'ERR_PDF_MODIFIED',
      'the PDF is certified by its author with no changes allowed (DocMDP P=1): any signature added to it would ' +
        'break that certification',
    )
  }
}

/**
 * The file read for an update, as it is; or, when its cross-reference data is lost, read after a revision that
 * rebuilds it, as the readers that open such a file rebuild it.
 */
async function readWithCrossReference(bytes: Uint8Array, options: PrepareOptions) {
  try {
    return { base: bytes, ...(await readSignedPdfForUpdate(bytes, options)) }
  } catch (error) {
    if (!(error instanceof LostCrossReference)) throw error
    const base = await withRebuiltCrossReference(bytes, error)
    return { base, ...(await readSignedPdfForUpdate(base, options)) }
  }
}

/**
 * Checks that a signature revision can be appended to `bytes` at `placement`, before anything irreversible (the
 * anchor transaction) happens. Throws `PdfError` for files that are not PDFs, encrypted, damaged or unsupported,
 * and for a page that does not exist.
 */
export async function prepareSignatureRevision(
  bytes: Uint8Array,
  placement: StampPlacement = {},
  options: PrepareOptions = {},
): Promise<PreparedSignatureRevision> {
  const { base, pdf: existing, view } = await readWithCrossReference(bytes, options)
  refuseChangedAfterSigning(existing)
  // The document's first signature certifies it: readers then hold later revisions to form filling and signing.
  const certify = existing.pdfSignatures.length === 0 && existing.certification === null
  const latest = existing.revisions.findLast((revision) => revision.metadata !== null)
  const signatures = latest?.metadata?.signatures ?? []
  const probe = await loadForUpdate(view, options.password)
  const pageNumber = placement.page ?? 1
  const pageCount = probe.getPageCount()
  if (!Number.isInteger(pageNumber) || pageNumber < 1 || pageNumber > pageCount) {
    throw new PdfError('ERR_PDF_UNSUPPORTED', `page ${pageNumber} does not exist (the PDF has ${pageCount})`)
  }
  const size = placement.size ?? DEFAULT_STAMP_SIZE
  if (!(size >= MIN_STAMP_SIZE && size <= MAX_STAMP_SIZE)) {
    throw new PdfError(
      'ERR_PDF_UNSUPPORTED',
      `the code's size must be between ${MIN_STAMP_SIZE} and ${MAX_STAMP_SIZE} pt`,
    )
  }
  const geometry = geometryOf(probe, pageNumber)
  const layout = stampLayout(size)
  const fallback = defaultPlace(geometry, layout, signatures.length, STAMP_MARGIN, STAMP_GAP)
  const place: DisplayedStamp = {
    x: placement.x ?? fallback?.x ?? 0,
    y: placement.y ?? fallback?.y ?? 0,
    width: layout.width,
    height: layout.height,
  }
  if (!fallback && (placement.x === undefined || placement.y === undefined)) {
    throw new PdfError('ERR_PDF_UNSUPPORTED', `page ${pageNumber} has no free place left for a code: give x and y`)
  }
  const outside = outsidePage(geometry, place, size)
  if (outside) throw new PdfError('ERR_PDF_UNSUPPORTED', `on page ${pageNumber}, ${outside}`)
  const stamp = { page: pageNumber, x: place.x, y: place.y, size, height: layout.height }
  const placed = placeStamp(geometry, place)
  // Only a file nobody signed yet may have its form drawn: that changes what an earlier signer saw.
  const readersDrawForm = needsAppearances(probe)
  const formToDraw = readersDrawForm && existing.pdfSignatures.length === 0
  const warnings = readersDrawForm && !formToDraw ? [UNDRAWN_CODE_WARNING] : []

  return {
    base,
    existing,
    signatures,
    stamp,
    warnings,
    async write(input) {
      const json = writePdfMetadata({ signatures: input.signatures })
      // A fresh load: the probe must not carry state into the update.
      const pdf = await loadForUpdate(view, options.password)
      if (formToDraw) await drawFormAppearances(pdf)
      addSignatureField(pdf, {
        pageIndex: stamp.page - 1,
        placed,
        layout,
        qr: qrModules(input.qrUrl),
        caption: captionLines(input.signerName, input.time, layout),
        signerName: input.signerName,
        reason: input.reason,
        time: input.time,
        certify,
      })
      const metadataRef = pdf.createStream({ Type: PdfName.of(METADATA_STREAM_TYPE) }, new TextEncoder().encode(json))
      pdf.getCatalog().set(METADATA_CATALOG_KEY, metadataRef)
      const appended = appendedTo(base, view, await pdf.save({ incremental: true }))
      const placedSignature = placeSignature(appended, base.length)
      const digest = new Uint8Array(
        await crypto.subtle.digest('SHA-256', placedSignature.signedBytes as Uint8Array<ArrayBuffer>),
      )
      return placedSignature.embed(await input.sign(digest))
    },
  }
}
