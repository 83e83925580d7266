// The key of an encrypted PDF (the standard security handler: RC4, AES-128, AES-256), through @libpdf/core. Most
// encrypted PDFs that arrive from institutions have an owner password only: their user password is empty, every
// reader opens them, and so does this one. A file with a user password needs it.
import { PdfRef as LibraryRef, PDF, type PdfStream } from '@libpdf/core'
import { damaged, PdfError } from './pdf-errors.ts'

export interface OpenedPdf {
  /** The library's document, opened with the key: it encrypts what is appended to it with that key too. */
  document: PDF
  /** The raw (decrypted, still encoded) data of a stream object; undefined when the object is not a stream. */
  streamData(num: number, gen: number): Uint8Array | undefined
  /**
   * A string of object `num` as written (encrypted with that object's key) in clear. AES encrypts with a fresh IV
   * each time, so an object written again unchanged holds other bytes: only its clear text can be compared.
   */
  decryptString(bytes: Uint8Array, num: number, gen: number): Uint8Array
  /** Likewise for a stream's raw data (a stream written again unchanged holds other bytes too). */
  decryptStream(bytes: Uint8Array, num: number, gen: number): Uint8Array
}

/** Opens `view` (library-view.ts) with the user password, empty unless given. */
export async function openWithLibrary(view: Uint8Array, password: string | undefined): Promise<OpenedPdf> {
  let document: PDF
  try {
    document = await PDF.load(view, { lenient: false, ...(password !== undefined && { credentials: password }) })
  } catch (error) {
    throw damaged(`it cannot be parsed (${(error as Error).message})`)
  }
  if (document.isEncrypted && !document.isAuthenticated) {
    throw new PdfError(
      'ERR_PDF_PASSWORD',
      password === undefined
        ? 'the PDF is protected by a password that is needed to open it'
        : 'the password given does not open the PDF',
    )
  }
  return {
    document,
    streamData(num, gen) {
      const object = document.getObject(LibraryRef.of(num, gen))
      return object?.type === 'stream' ? (object as PdfStream).data : undefined
    },
    decryptString: (bytes, num, gen) => securityHandler(document).decryptString(bytes, num, gen),
    decryptStream: (bytes, num, gen) => securityHandler(document).decryptStream(bytes, num, gen),
  }
}

function securityHandler(document: PDF) {
  const handler = document.context.info.securityHandler
  if (!handler) throw damaged('its encryption cannot be read')
  return handler
}
