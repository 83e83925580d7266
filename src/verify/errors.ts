// Why a verification ended without a result; the route maps each to its problem code. A chain that cannot be asked
// is ChainUnavailableError (src/chain/chain-errors.ts), shared with the relayer.

/** The transaction (or a link of its chain) holds no DocumentAnchored event of the configured contract. */
export class AnchorNotFoundError extends Error {
  override name = 'AnchorNotFoundError'
}

/** The chain is longer than the configured walk limit. */
export class ChainTooDeepError extends Error {
  override name = 'ChainTooDeepError'
}
