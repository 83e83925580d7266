// What sending a signed transaction is given and what becomes of it (actions/send-signed.ts decides).
import type { Hex } from 'viem'

export interface Sendable {
  raw: Hex
  hash: Hex
  nonce: number
}

export type SendOutcome =
  /** The node holds it, or mined it. */
  | { kind: 'sent' }
  /** Its nonce was consumed on chain by a transaction that is not ours: it can never be mined (a re-issue may follow). */
  | { kind: 'nonce-taken'; reason: string }
  /** A lower nonce is missing on the node. */
  | { kind: 'gap'; reason: string }
  /** Refused on its fee: a replacement at the same nonce with a higher fee is what moves it. */
  | { kind: 'underpriced'; reason: string }
  /** Refused for a reason that excludes it ever being mined as signed (checked, for "insufficient funds"). */
  | { kind: 'refused'; reason: string }
  /** Nothing certain: it may be with the node, or reach it later. */
  | { kind: 'unclear'; reason: string }

export interface ToSend {
  tx: Sendable
  /** Every hash of ours at the transaction's nonce (the anchor's replacements too): a "nonce too low" is ours when the
   * node knows any of them. Defaults to the transaction's own hash. */
  ownAtNonce?: readonly Hex[]
}
