// Why a verification ended without a result; the route maps each to its problem code.

/** The transaction (or a link of its chain) holds no DocumentAnchored event of the configured contract. */
export class AnchorNotFoundError extends Error {
  override name = 'AnchorNotFoundError'
}

/** The chain is longer than the configured walk limit. */
export class ChainTooDeepError extends Error {
  override name = 'ChainTooDeepError'
}

/** The chain could not be asked: the RPC failed, timed out or answered with an error. */
export class ChainUnavailableError extends Error {
  override name = 'ChainUnavailableError'
}
