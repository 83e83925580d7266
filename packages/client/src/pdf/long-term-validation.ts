// Long-term validation (PAdES B-LT, then B-LTA): after a signature, the file gains a revision with a Document Security
// Store (/DSS: /Certs, /OCSPs, /CRLs and /VRI for every signature's and timestamp's chain), then a document timestamp
// (/Type /DocTimeStamp, /SubFilter /ETSI.RFC3161) over everything so far. A verifier years later, with every certificate expired and every responder gone, finds in the file what
// it needs: who signed, that they were not revoked when they did, and a trusted time that proves it all existed then.
// Run again before the newest timestamp's certificate expires (`anchor extend`), it adds the next link of the chain.
//
// @libpdf/core writes the revisions (addValidationData, addTimestamp); this module decides what goes in, and checks that what
// was written is only what the allowed-changes rules permit after a signature, so that extending a file never turns
// a valid signature into a changed one.
import { type PDF, SignatureError } from '@libpdf/core'
import { appendedTo, loadForUpdate, refuseChangedAfterSigning } from './append-signature-revision.ts'
import { signatureStructureProblem } from './check-pdf-signatures.ts'
import { PdfError } from './pdf-errors.ts'
import { readSignedPdf, readSignedPdfForUpdate } from './read-signed-pdf.ts'
import type { RevocationSource } from './revocation-source.ts'
import { describeChanges } from './signature-changes.ts'

export interface LongTermValidationOptions {
  /**
   * An RFC 3161 timestamp token (DER) for a SHA-256 digest: in practice the service's `POST /api/document-timestamps`
   * (AnchorClient's `documentTimestamp`).
   */
  documentTimestamp(digest: Uint8Array): Promise<Uint8Array>
  /** Where certificates' revocation status comes from (revocationSource). */
  revocation: RevocationSource
  /** The user password of an encrypted PDF that has one. */
  password?: string
}

export interface LongTermValidationResult {
  bytes: Uint8Array
  /**
   * What could not be gathered, in a reader's words (a certificate whose status no responder gave): the file is then
   * timestamped all the same, and the checker says what it lacks.
   */
  warnings: string[]
}

/** Room for a timestamp token: the TSA's signature and its chain. */
const TIMESTAMP_BYTES = 12 * 1024

/**
 * Appends the validation data of every signature and timestamp in `input`, a document timestamp, and that timestamp's
 * validation data. Throws `PdfError` for a file with no signature, one changed after it was signed, or one the
 * library cannot append to; what the timestamp authority or the revocation source throw passes through.
 */
export async function addLongTermValidation(
  input: Uint8Array,
  options: LongTermValidationOptions,
): Promise<LongTermValidationResult> {
  const { pdf: existing, view } = await readSignedPdfForUpdate(input, { password: options.password })
  if (existing.pdfSignatures.length === 0) {
    throw new PdfError('ERR_PDF_UNSUPPORTED', 'the PDF has no signature whose validation data could be added')
  }
  refuseChangedAfterSigning(existing)
  if (existing.encrypted) {
    // The library writes an encrypted file's signature dictionaries again, encrypting their /Contents, which readers
    // then no longer find where /ByteRange says: every signature would break.
    throw new PdfError('ERR_PDF_UNSUPPORTED', 'validation data cannot be added to an encrypted PDF yet')
  }
  const document = await loadForUpdate(view, options.password)
  const { bytes: out, warnings } = await archive(document, options)
  const bytes = appendedTo(input, view, out)
  await ensureOnlyValidationData(bytes, existing.revisions.length, options.password)
  // The library looks for every issuer at its caIssuers address even when the CMS carries the whole chain, and says
  // so when that fails; it then uses the chain carried, which is what the checker judges.
  const gathered = warnings.filter((warning) => warning.code !== 'CHAIN_INCOMPLETE')
  return { bytes, warnings: gathered.map((warning) => warning.message) }
}

/**
 * The validation data, then the document timestamp, last: a timestamp that covers the whole file is what validators
 * look for at its end (iText's LtvVerifier refuses a file that ends otherwise). Its own chain's validation data goes
 * into the next extension's DSS, written before that extension's timestamp.
 */
async function archive(document: PDF, options: LongTermValidationOptions) {
  try {
    const validation = await document.addValidationData({ revocationProvider: options.revocation })
    const timestamp = await document.addTimestamp({
      timestampAuthority: { timestamp: (digest) => options.documentTimestamp(digest) },
      digestAlgorithm: 'SHA-256',
      estimatedSize: TIMESTAMP_BYTES,
    })
    return { bytes: timestamp.bytes, warnings: [...validation.warnings, ...timestamp.warnings] }
  } catch (error) {
    // The library's own errors (a token larger than the room made for it, a field it cannot write) name the file's
    // problem; anything else (the service, the network) is the caller's to report as it is.
    if (error instanceof SignatureError) {
      throw new PdfError('ERR_PDF_UNSUPPORTED', `the validation data could not be written (${error.message})`)
    }
    throw error
  }
}

/**
 * The revisions from `from` on change nothing a signature covers, and leave every signature's structure as it was:
 * what a verifier would otherwise hold against it.
 */
async function ensureOnlyValidationData(bytes: Uint8Array, from: number, password: string | undefined) {
  const written = await readSignedPdf(bytes, { password })
  const changes = written.changes.filter((change) => change.revision >= from)
  const broken = written.pdfSignatures.some((field) => signatureStructureProblem(written, field) !== null)
  if (changes.length > 0 || written.structureProblems.length > 0 || broken) {
    throw new PdfError(
      'ERR_PDF_UNSUPPORTED',
      `the validation data was written with changes a signature does not allow (${describeChanges(changes) || 'a signature’s structure'})`,
    )
  }
}
