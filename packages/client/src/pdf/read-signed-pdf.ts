// Reads a PDF's incremental revisions and the signature metadata each one carries. This is the entry point the CLI
// and the verification page share; it runs on Web APIs alone.

import { FormatError, InvalidMetadataError } from '../formats/errors.ts'
import { type PdfMetadata, readPdfMetadata } from '../formats/pdf-metadata.ts'
import { type Certification, readCertification } from './certification.ts'
import { readValidationData, type ValidationData } from './document-security-store.ts'
import { type OpenedPdf, openWithLibrary } from './encrypted-pdf.ts'
import { libraryView } from './library-view.ts'
import { damaged, PdfError } from './pdf-errors.ts'
import { isDict, type PdfRevision, type PdfStructure, RevisionResolver, readPdfStructure } from './pdf-revisions.ts'
import { PdfRef } from './pdf-syntax.ts'
import { MAX_METADATA_BYTES, MAX_PDF_BYTES } from './read-budget.ts'
import { findRevisionChanges, type RevisionChange, type RevisionNote } from './revision-changes.ts'
import { findStructureProblems, type StructureProblem } from './revision-structure.ts'
import { type PdfSignatureField, readSignatureFields } from './signature-fields.ts'
import { decodeStream } from './stream-filters.ts'

/** Catalog key whose value is the revision's metadata stream (a second-class name of this project). */
export const METADATA_CATALOG_KEY = 'AnchorMetadata'
/** /Type of the metadata stream, so that the stream says what it is on its own. */
export const METADATA_STREAM_TYPE = 'AnchorMetadata'

export interface SignedPdfRevision {
  /** 0 for the original file, then 1, 2, ... for each incremental update. */
  index: number
  /** Byte range [start, end) of the revision in the file. */
  start: number
  end: number
  xrefOffset: number
  xrefKind: 'table' | 'stream'
  /** The signature metadata this revision added (a metadata stream written in this revision), if any. */
  metadata: PdfMetadata | null
  /**
   * Why the revision's metadata (the JSON of its metadata stream) is not valid metadata; null when there is none or
   * it was read. A metadata stream the PDF's structure does not let be read makes the whole file damaged.
   */
  metadataError: string | null
}

export interface SignedPdf {
  bytes: Uint8Array
  revisions: SignedPdfRevision[]
  /** Bytes after the last revision's `%%EOF` line that belong to no revision. */
  trailingBytes: number
  /** Encrypted with the standard security handler (opened with the empty user password, or the one given). */
  encrypted: boolean
  /** Every PDF signature in the file (signature fields with a value), ours and other products'. */
  pdfSignatures: PdfSignatureField[]
  /**
   * What each revision from the first signed one on changed that a later revision may not change after a signature
   * (revision-changes.ts), each against the revision before it; empty for a file without signatures.
   */
  changes: RevisionChange[]
  /** Changes that alter nothing shown (document information, XMP metadata), from the same revisions. */
  notes: RevisionNote[]
  /** Ambiguities in the structure of those revisions (revision-structure.ts). */
  structureProblems: StructureProblem[]
  /** The document's certification signature, when it has one. */
  certification: Certification | null
  /** What the file's Document Security Store holds for checking its signatures offline (PAdES B-LT). */
  validationData: ValidationData
}

export interface ReadSignedPdfOptions {
  /** The user password of an encrypted PDF that has one; most encrypted PDFs (owner password only) need none. */
  password?: string
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

async function readRevisionMetadata(
  structure: PdfStructure,
  revision: PdfRevision,
  opened: OpenedPdf | undefined,
): Promise<PdfMetadata | null> {
  const resolver = new RevisionResolver(structure, revision.index, opened?.streamData)
  const catalog = await resolver.resolve(revision.trailer.get('Root'))
  if (!isDict(catalog)) throw damaged('the trailer /Root is not a catalog dictionary')
  const ref = catalog.get(METADATA_CATALOG_KEY)
  // Only a metadata stream written in this very revision belongs to it; an older one is merely still referenced.
  if (!(ref instanceof PdfRef) || !revision.entries.has(ref.num)) return null
  const stream = await resolver.stream(ref)
  if (!stream) throw damaged(`/${METADATA_CATALOG_KEY} is not a stream`)
  const data = await decodeStream(stream, MAX_METADATA_BYTES)
  let json: string
  try {
    json = utf8.decode(data)
  } catch {
    throw new InvalidMetadataError([{ field: 'metadata', reason: 'is not UTF-8 text' }])
  }
  return readPdfMetadata(json)
}

/**
 * Reads every revision's byte range and signature metadata (version 1 or 2, read as version 2). Throws a
 * `PdfError` for a file that is not a PDF, has a damaged structure (cross-reference chain, streams, lengths), asks for
 * more than its size can need, or needs a password it was not given; a revision whose metadata alone is not valid
 * metadata gets `metadataError` instead, so that the other signatures can still be checked.
 */
export async function readSignedPdf(bytes: Uint8Array, options: ReadSignedPdfOptions = {}): Promise<SignedPdf> {
  return (await readSignedPdfForUpdate(bytes, options)).pdf
}

/** readSignedPdf, and the file as the PDF library that appends to it is to be shown it (library-view.ts). */
export async function readSignedPdfForUpdate(
  bytes: Uint8Array,
  options: ReadSignedPdfOptions = {},
): Promise<{ pdf: SignedPdf; view: Uint8Array }> {
  if (bytes.length > MAX_PDF_BYTES) {
    throw new PdfError(
      'ERR_PDF_UNSUPPORTED',
      `the PDF is ${Math.ceil(bytes.length / 2 ** 20)} MB; the most that is read is ${MAX_PDF_BYTES / 2 ** 20} MB`,
    )
  }
  const structure = await readPdfStructure(bytes)
  const view = libraryView(structure)
  // Only an encrypted file needs the PDF library to be read: its streams need the document's key.
  const opened = structure.encrypt === undefined ? undefined : await openWithLibrary(view, options.password)
  const revisions: SignedPdfRevision[] = []
  for (const revision of structure.revisions) {
    let metadata: PdfMetadata | null = null
    let metadataError: string | null = null
    try {
      metadata = await readRevisionMetadata(structure, revision, opened)
    } catch (error) {
      if (!(error instanceof FormatError)) throw error
      metadataError = error.message
    }
    const { index, start, end, xrefOffset, xrefKind } = revision
    revisions.push({ index, start, end, xrefOffset, xrefKind, metadata, metadataError })
  }
  const last = revisions[revisions.length - 1]!
  const pdfSignatures = await readSignatureFields(structure, opened?.streamData)
  // A signing revision is judged too, against the one before it: what it adds is what its signer vouches for.
  const firstSigned = Math.min(
    ...revisions.filter((revision) => revision.metadata !== null).map((revision) => revision.index),
    ...pdfSignatures.map((field) => field.revision + 1),
  )
  const signed = Number.isFinite(firstSigned)
  const { changes, notes } = signed
    ? await findRevisionChanges(structure, firstSigned, opened)
    : { changes: [], notes: [] }
  return {
    pdf: {
      bytes,
      revisions,
      trailingBytes: bytes.length - last.end,
      encrypted: opened !== undefined,
      pdfSignatures,
      changes,
      notes,
      structureProblems: signed ? await findStructureProblems(structure, 1) : [],
      certification: await readCertification(structure, opened?.streamData),
      validationData: await readValidationData(structure, opened?.streamData),
    },
    view,
  }
}

/** The signatures listed by the newest revision whose metadata could be read (empty when there is none). */
export function latestMetadata(pdf: SignedPdf): SignedPdfRevision | undefined {
  return pdf.revisions.findLast((revision) => revision.metadata !== null)
}
