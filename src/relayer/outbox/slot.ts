import type { Address } from 'viem'

/** One relayer key on one chain: the key of its nonce row, and of everything it signs. */
export interface Slot {
  chainId: number
  /** Lower-case, as the database stores it. */
  relayer: Address
}
