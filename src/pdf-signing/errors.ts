// Why a PDF signing request could not be done: one base with a stable `code`; src/api/domain-problems.ts maps each
// code to HTTP.

export type PdfSigningErrorCode =
  | 'ERR_CSR_INVALID'
  | 'ERR_SIGNATURE_REFUSED'
  | 'ERR_TIMESTAMP_UNAVAILABLE'
  | 'ERR_SIGNING_KEY_UNAVAILABLE'

export abstract class PdfSigningError extends Error {
  abstract readonly code: PdfSigningErrorCode
}

/** The certificate request is not a P-256 PKCS#10 request signed by its key; the message says which. */
export class CertificateRequestError extends PdfSigningError {
  override name = 'CertificateRequestError'
  readonly code = 'ERR_CSR_INVALID'
}

/** Why a PDF signature's CMS is refused; the message says what is wrong with it. */
export class SignatureRefusedError extends PdfSigningError {
  override name = 'SignatureRefusedError'
  readonly code = 'ERR_SIGNATURE_REFUSED'
}

/** No time-stamping authority answered in time; the message names each authority's failure (for the log only). */
export class TimestampUnavailableError extends PdfSigningError {
  override name = 'TimestampUnavailableError'
  readonly code = 'ERR_TIMESTAMP_UNAVAILABLE'
}

/** The CA's key on its token did not sign; the cause says why (for the log only). */
export class SigningKeyUnavailableError extends PdfSigningError {
  override name = 'SigningKeyUnavailableError'
  readonly code = 'ERR_SIGNING_KEY_UNAVAILABLE'
  constructor(cause: unknown) {
    super('the CA key did not sign', { cause })
  }
}

/** Every PDF signing failure, so a code names its class. */
export type PdfSigningErrorType =
  | CertificateRequestError
  | SignatureRefusedError
  | TimestampUnavailableError
  | SigningKeyUnavailableError
