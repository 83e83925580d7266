// An anchor as the service's verification walks it: the chain's record of one signature, without where it sits on
// chain. Reading it out of a receipt is @docanchor/client's anchorFromReceipt, which the `anchor` command shares.
import type { AnchoredEvent } from '@docanchor/client'

/** One anchor as verifiers see it; every hex value lower-case. */
export type ChainEntry = Pick<AnchoredEvent, 'txHash' | 'compositeHash' | 'signer' | 'timestamp' | 'previousTxHash'>

export function toChainEntry(record: AnchoredEvent): ChainEntry {
  return {
    txHash: record.txHash,
    compositeHash: record.compositeHash,
    signer: record.signer,
    timestamp: record.timestamp,
    previousTxHash: record.previousTxHash,
  }
}
