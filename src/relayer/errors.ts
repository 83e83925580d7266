// Why a relay could not be done: one base with a stable `code`; src/api/domain-problems.ts maps each code to HTTP.
// A chain that cannot be reached is ChainUnavailableError (src/chain/chain-errors.ts), shared with verification.

export type RelayErrorCode = 'ERR_QUOTA_EXCEEDED' | 'ERR_ANCHOR_CONFLICT' | 'ERR_PREVIOUS_NOT_FOUND' | 'ERR_USER_GONE'

export abstract class RelayError extends Error {
  abstract readonly code: RelayErrorCode
}

export class QuotaExceededError extends RelayError {
  override name = 'QuotaExceededError'
  readonly code = 'ERR_QUOTA_EXCEEDED'
  constructor(
    readonly limit: number,
    readonly used: number,
    readonly resetsAt: Date,
  ) {
    super('The monthly anchor quota of this plan is used up')
  }
}

export class AnchorConflictError extends RelayError {
  override name = 'AnchorConflictError'
  readonly code = 'ERR_ANCHOR_CONFLICT'
  constructor() {
    super('This composite hash is already anchored with different data or by another user')
  }
}

export class PreviousNotFoundError extends RelayError {
  override name = 'PreviousNotFoundError'
  readonly code = 'ERR_PREVIOUS_NOT_FOUND'
  constructor() {
    super('previousTxHash is neither the zero hash nor an anchor of this contract')
  }
}

/** The signed-in user was deleted while the request ran: nothing of the request was kept. */
export class UserGoneError extends RelayError {
  override name = 'UserGoneError'
  readonly code = 'ERR_USER_GONE'
  constructor() {
    super('This account no longer exists')
  }
}

/** Every relay failure, so a code names its class (`Extract<RelayErrorType, { code: C }>`). */
export type RelayErrorType = QuotaExceededError | AnchorConflictError | PreviousNotFoundError | UserGoneError
