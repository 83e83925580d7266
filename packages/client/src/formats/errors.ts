// Errors of the client data formats: one base class with a stable `code`, one subclass per kind of failure, so
// callers branch on `code` (or `instanceof`) and never on message text.

export type FormatErrorCode =
  | 'ERR_INVALID_BASE64URL'
  | 'ERR_INVALID_HEX'
  | 'ERR_INVALID_PAYLOAD'
  | 'ERR_PAYLOAD_TOO_LARGE'
  | 'ERR_INVALID_CIPHER_INPUT'
  | 'ERR_DECRYPTION_FAILED'
  | 'ERR_INVALID_QR_URL'
  | 'ERR_INVALID_METADATA'

export interface FieldIssue {
  /** Where the problem is, e.g. `s.e` or `signatures[0].salt`. */
  readonly field: string
  readonly reason: string
}

export class FormatError extends Error {
  readonly code: FormatErrorCode

  constructor(code: FormatErrorCode, message: string) {
    super(message)
    this.code = code
    this.name = new.target.name
  }
}

export class InvalidBase64UrlError extends FormatError {
  constructor(message: string) {
    super('ERR_INVALID_BASE64URL', message)
  }
}

export class InvalidHexError extends FormatError {
  constructor(message: string) {
    super('ERR_INVALID_HEX', message)
  }
}

/** A field-level validation failure; `field` and `reason` repeat the first issue, `issues` lists them all. */
abstract class FieldValidationError extends FormatError {
  readonly field: string
  readonly reason: string
  readonly issues: readonly FieldIssue[]

  constructor(code: FormatErrorCode, issues: readonly [FieldIssue, ...FieldIssue[]]) {
    const [first] = issues
    super(code, `${first.field}: ${first.reason}`)
    this.field = first.field
    this.reason = first.reason
    this.issues = issues
  }
}

export class InvalidPayloadError extends FieldValidationError {
  constructor(issues: readonly [FieldIssue, ...FieldIssue[]]) {
    super('ERR_INVALID_PAYLOAD', issues)
  }
}

export class InvalidMetadataError extends FieldValidationError {
  constructor(issues: readonly [FieldIssue, ...FieldIssue[]]) {
    super('ERR_INVALID_METADATA', issues)
  }
}

export class PayloadTooLargeError extends FormatError {
  /** Length of the base64url ciphertext the payload would produce. */
  readonly length: number
  readonly limit: number

  constructor(length: number, limit: number) {
    super('ERR_PAYLOAD_TOO_LARGE', `payload too large for the QR budget: ${length} characters, limit ${limit}`)
    this.length = length
    this.limit = limit
  }
}

/** Raised by the encrypting side for a key or nonce of the wrong size: a programming error, not an attack. */
export class InvalidCipherInputError extends FormatError {
  constructor(message: string) {
    super('ERR_INVALID_CIPHER_INPUT', message)
  }
}

/**
 * The only error decryption ever throws. Its message is fixed and it carries no cause, so a caller (or an
 * attacker probing a verification page) cannot tell a wrong key from tampering, truncation or bad encoding.
 */
export class DecryptionFailedError extends FormatError {
  constructor() {
    super('ERR_DECRYPTION_FAILED', 'decryption operation failed')
  }
}

export class InvalidQrUrlError extends FormatError {
  constructor(message: string) {
    super('ERR_INVALID_QR_URL', message)
  }
}
