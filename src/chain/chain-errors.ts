// Errors of talking to the chain, shared by every domain that asks it (relay, verify): one base with a stable `code`.

export type ChainErrorCode = 'ERR_CHAIN_UNAVAILABLE'

export abstract class ChainError extends Error {
  abstract readonly code: ChainErrorCode
}

/** The chain's RPC failed, timed out or refused; nothing of the request was kept. */
export class ChainUnavailableError extends ChainError {
  override name = 'ChainUnavailableError'
  readonly code = 'ERR_CHAIN_UNAVAILABLE'
  constructor(detail = 'The blockchain node is unavailable; try again later', options: { cause?: unknown } = {}) {
    super(detail, options)
  }
}

/** Every chain failure, so a code names its class. */
export type ChainErrorType = ChainUnavailableError

/** Runs a chain call whose failure means the work cannot go ahead: any failure becomes ChainUnavailableError. */
export async function orChainUnavailable<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work()
  } catch (error) {
    if (error instanceof ChainUnavailableError) throw error
    throw new ChainUnavailableError(undefined, { cause: error })
  }
}
