// Errors of the PDF reader and writer: one class with a stable `code`, so the CLI and the verification page pick
// their wording and exit codes from the code, never from the message text.

export type PdfErrorCode =
  /** The bytes do not start with a PDF header. */
  | 'ERR_NOT_PDF'
  /** The file is encrypted: its streams (the metadata among them) cannot be read or appended without the key. */
  | 'ERR_PDF_ENCRYPTED'
  /** The cross-reference data (startxref, tables, streams, trailers) is missing, inconsistent or unreadable. */
  | 'ERR_PDF_DAMAGED'
  /** A well-formed PDF this tool cannot read or append a revision to (unknown filter, no such page, ...). */
  | 'ERR_PDF_UNSUPPORTED'

export class PdfError extends Error {
  readonly code: PdfErrorCode

  constructor(code: PdfErrorCode, message: string) {
    super(message)
    this.code = code
    this.name = 'PdfError'
  }
}

export const damaged = (message: string) => new PdfError('ERR_PDF_DAMAGED', message)
