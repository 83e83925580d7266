// Errors of the PDF reader and writer: one class with a stable `code`, so the CLI and the verification page pick
// their wording and exit codes from the code, never from the message text.

export type PdfErrorCode =
  /** The bytes do not start with a PDF header. */
  | 'ERR_NOT_PDF'
  /** The file is encrypted with a user password, and none (or a wrong one) was given. */
  | 'ERR_PDF_PASSWORD'
  /** The cross-reference data (startxref, tables, streams, trailers) is missing, inconsistent or unreadable. */
  | 'ERR_PDF_DAMAGED'
  /** A well-formed PDF this tool cannot read or append a revision to (unknown filter, no such page, ...). */
  | 'ERR_PDF_UNSUPPORTED'
  /**
   * A signed PDF changed after a signature in a way a later revision may not (or is built ambiguously), or is
   * certified against any change: a signature added to it would vouch for a document whose signatures do not hold.
   */
  | 'ERR_PDF_MODIFIED'

export class PdfError extends Error {
  readonly code: PdfErrorCode

  constructor(code: PdfErrorCode, message: string) {
    super(message)
    this.code = code
    this.name = 'PdfError'
  }
}

/** A damaged file, said first in a user's words, then where and what for whoever repairs it. */
export const damaged = (detail: string) => new PdfError('ERR_PDF_DAMAGED', `the PDF is damaged: ${detail}`)

/**
 * Damaged so that a cross-reference pointer (`startxref`, `/Prev`) leads to no section at all: qpdf, mutool and
 * poppler open such a file by rebuilding the data from the objects themselves, and so does signing it
 * (rebuilt-cross-reference.ts). A section that is there but unreadable or hostile is plainly damaged, never this.
 */
export class LostCrossReference extends PdfError {
  constructor(detail: string) {
    super('ERR_PDF_DAMAGED', `the PDF is damaged: ${detail}`)
  }
}
