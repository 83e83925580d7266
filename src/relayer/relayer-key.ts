// One relayer key and everything this process holds about it between requests: whether it may take work, how busy it
// is, its line of sends in nonce order, whether its nonce row exists, and what the monitor is waiting to see of it.
// The pool owns one per key (relayer-pool.ts) and the relay context owns the pool: the relayer's mutable state per key
// lives here and nowhere else, and what the database holds is the rest.
import type { Address, Hex } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import { SendLine } from './send-line.ts'

export class RelayerKey {
  /** Lower-case: the form stored in the database. */
  readonly address: Address
  /** Until the first balance is read, assume it can work: the node refuses an unfunded transaction anyway. */
  funded = true
  /** Its lowest pending transaction sits at the fee cap and does not move. */
  jammed = false
  /** Being rotated out (`relayer_drains`): it finishes its pending transactions but takes no new anchors. */
  draining = false
  /** Relays under way on it. */
  inFlight = 0
  /** Which of its nonces the node holds, and which this process is about to send (send-in-order.ts). */
  readonly line = new SendLine()
  /** Its nonce row exists: created from the chain's count once per process, or by a resync. */
  nonceRow: Promise<void> | undefined = undefined
  /**
   * Its nonces used by a transaction the database does not hold, with the count of reconciliations that had succeeded
   * when the monitor saw each: the anchor there is re-signed only once a later one has looked it up on chain.
   */
  readonly lookedUpOnChain = new Map<number, number>()
  /** Its transactions stuck at the fee cap that were alerted already (once each). */
  readonly alertedAtFeeCap = new Set<Hex>()

  constructor(readonly account: LocalAccount) {
    this.address = account.address.toLowerCase() as Address
  }
}
