// Why a verification ended without a result: one base with a stable `code`; src/api/domain-problems.ts maps each code
// to HTTP. A chain that cannot be asked is ChainUnavailableError (src/chain/chain-errors.ts), shared with the relayer.

export const VERIFY_ERROR_CODES = ['ERR_ANCHOR_NOT_FOUND', 'ERR_CHAIN_TOO_DEEP'] as const
export type VerifyErrorCode = (typeof VERIFY_ERROR_CODES)[number]

export abstract class VerifyError extends Error {
  abstract readonly code: VerifyErrorCode
  /** Until when (ms since the epoch) the service remembers this failure; unset for one it does not remember. */
  freshUntil: number | undefined
}

/** The transaction (or a link of its chain) holds no DocumentAnchored event of the configured contract. */
export class AnchorNotFoundError extends VerifyError {
  override name = 'AnchorNotFoundError'
  readonly code = 'ERR_ANCHOR_NOT_FOUND'
}

/** The chain is longer than the configured walk limit. */
export class ChainTooDeepError extends VerifyError {
  override name = 'ChainTooDeepError'
  readonly code = 'ERR_CHAIN_TOO_DEEP'
}

/** Every verify failure, so a code names its class. */
export type VerifyErrorType = AnchorNotFoundError | ChainTooDeepError

/** The failure a code stands for, with its message and how long it is remembered: a remembered failure thrown again. */
export function verifyErrorOf(code: VerifyErrorCode, message: string, freshUntil: number): VerifyErrorType {
  const error = code === 'ERR_ANCHOR_NOT_FOUND' ? new AnchorNotFoundError(message) : new ChainTooDeepError(message)
  error.freshUntil = freshUntil
  return error
}
