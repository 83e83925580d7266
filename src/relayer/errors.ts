// Why a relay could not be done; the route maps each to its problem code.

export class QuotaExceededError extends Error {
  override name = 'QuotaExceededError'
  constructor(
    readonly limit: number,
    readonly used: number,
    readonly resetsAt: Date,
  ) {
    super('The monthly anchor quota of this plan is used up')
  }
}

export class AnchorConflictError extends Error {
  override name = 'AnchorConflictError'
  constructor() {
    super('This composite hash is already anchored with different data or by another user')
  }
}

export class PreviousNotFoundError extends Error {
  override name = 'PreviousNotFoundError'
  constructor() {
    super('previousTxHash is neither the zero hash nor an anchor of this contract')
  }
}

/** The signed-in user was deleted while the request ran: nothing of the request was kept. */
export class UserGoneError extends Error {
  override name = 'UserGoneError'
  constructor() {
    super('This account no longer exists')
  }
}

/** The chain's RPC failed or refused; nothing of the request was kept. */
export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError'
  constructor(detail = 'The blockchain node is unavailable; try again later', options: { cause?: unknown } = {}) {
    super(detail, options)
  }
}
