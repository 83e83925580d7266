// Why a library sync could not be done: one base with a stable `code`; src/api/domain-problems.ts maps each code to
// HTTP.
import type { LibraryKind } from './library-types.ts'

export type LibraryErrorCode = 'ERR_LIBRARY_LIMIT'

export abstract class LibraryError extends Error {
  abstract readonly code: LibraryErrorCode
}

/** The sync would leave more live items of a kind than the per-user limit allows; nothing was written. */
export class LibraryLimitError extends LibraryError {
  override name = 'LibraryLimitError'
  readonly code = 'ERR_LIBRARY_LIMIT'
  constructor(readonly violations: { kind: LibraryKind; count: number; limit: number }[]) {
    super('library item limit exceeded')
  }
}

/** Every library failure, so a code names its class. */
export type LibraryErrorType = LibraryLimitError
