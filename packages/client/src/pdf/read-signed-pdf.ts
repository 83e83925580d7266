// Reads a PDF's incremental revisions and the signature metadata each one carries. This is the entry point the CLI
// and the verification page share; it runs on Web APIs alone.

import { FormatError } from '../formats/errors.ts'
import { type PdfMetadata, readPdfMetadata } from '../formats/pdf-metadata.ts'
import { PdfError } from './pdf-errors.ts'
import { isDict, type PdfRevision, RevisionResolver, readPdfStructure } from './pdf-revisions.ts'
import { PdfRef } from './pdf-syntax.ts'
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
  /** Why the revision's metadata stream could not be read; null when there is none or it was read. */
  metadataError: string | null
}

export interface SignedPdf {
  bytes: Uint8Array
  revisions: SignedPdfRevision[]
  /** Bytes after the last revision's `%%EOF` line that belong to no revision. */
  trailingBytes: number
}

const utf8 = new TextDecoder('utf-8', { fatal: true })

async function readRevisionMetadata(
  structure: Awaited<ReturnType<typeof readPdfStructure>>,
  revision: PdfRevision,
): Promise<PdfMetadata | null> {
  const resolver = new RevisionResolver(structure, revision.index)
  const catalog = await resolver.resolve(revision.trailer.get('Root'))
  if (!isDict(catalog)) throw new PdfError('ERR_PDF_DAMAGED', 'the trailer /Root is not a catalog dictionary')
  const ref = catalog.get(METADATA_CATALOG_KEY)
  // Only a metadata stream written in this very revision belongs to it; an older one is merely still referenced.
  if (!(ref instanceof PdfRef) || !revision.entries.has(ref.num)) return null
  const stream = await resolver.stream(ref)
  if (!stream) throw new PdfError('ERR_PDF_DAMAGED', `/${METADATA_CATALOG_KEY} is not a stream`)
  let json: string
  try {
    json = utf8.decode(await decodeStream(stream))
  } catch (error) {
    if (error instanceof PdfError) throw error
    throw new PdfError('ERR_PDF_DAMAGED', 'the metadata stream is not UTF-8 text')
  }
  return readPdfMetadata(json)
}

/**
 * Reads every revision's byte range and signature metadata (version 1 or 2, read as version 2). Throws a
 * `PdfError` for a file that is not a PDF, is encrypted, or has a broken cross-reference chain; a revision whose
 * metadata alone is unreadable gets `metadataError` instead, so that the other signatures can still be checked.
 */
export async function readSignedPdf(bytes: Uint8Array): Promise<SignedPdf> {
  const structure = await readPdfStructure(bytes)
  const revisions: SignedPdfRevision[] = []
  for (const revision of structure.revisions) {
    let metadata: PdfMetadata | null = null
    let metadataError: string | null = null
    try {
      metadata = await readRevisionMetadata(structure, revision)
    } catch (error) {
      if (!(error instanceof PdfError || error instanceof FormatError)) throw error
      metadataError = error.message
    }
    const { index, start, end, xrefOffset, xrefKind } = revision
    revisions.push({ index, start, end, xrefOffset, xrefKind, metadata, metadataError })
  }
  const last = revisions[revisions.length - 1]!
  return { bytes, revisions, trailingBytes: bytes.length - last.end }
}

/** The signatures listed by the newest revision whose metadata could be read (empty when there is none). */
export function latestMetadata(pdf: SignedPdf): SignedPdfRevision | undefined {
  return pdf.revisions.findLast((revision) => revision.metadata !== null)
}
