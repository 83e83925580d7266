// Recording where an anchor's transaction was mined (whichever of its hashes it was), batched with concurrent ones.
// Confirmed means the receipt holds the configured contract's DocumentAnchored event for this very anchor: a call to
// an address without code succeeds too (a node that lost the contract), and must never be taken for an anchor.
import { anchorFromReceipt, DOCUMENT_ANCHORED_TOPIC } from '@docanchor/client'
import type { Hex, TransactionReceipt } from 'viem'
import type { AnchorRow } from '../outbox/anchors.ts'
import type { RelayContext } from '../relay-context.ts'

/** What the receipt must show: the anchor's id and the hashes its event carries. */
export interface ExpectedAnchor {
  id: string
  compositeHash: string
  previousTxHash: string
}

/** The anchor as it is now; undefined when it no longer exists. */
export function recordReceipt(
  context: RelayContext,
  anchor: ExpectedAnchor,
  receipt: TransactionReceipt,
): Promise<AnchorRow | undefined> {
  const confirmed = holdsEvent(context, anchor, receipt)
  const contract = context.chain.contractAddress.toLowerCase()
  if (!confirmed) {
    const txHash = receipt.transactionHash
    context.onAnchorFailed?.(receipt.status === 'success' ? 'no_event' : 'reverted')
    if (receipt.status !== 'success') context.log.error({ txHash }, 'ALERT anchor transaction reverted on chain')
    else {
      context.log.error(
        { txHash, contract: context.chain.contractAddress },
        'ALERT anchor transaction mined without its DocumentAnchored event: is the contract at CONTRACT_ADDRESS on ' +
          'this chain? The anchor failed',
      )
      context.contract.suspect()
    }
  }
  return context.batches.confirmations.submit({
    anchorId: anchor.id,
    txHash: receipt.transactionHash.toLowerCase(),
    blockNumber: Number(receipt.blockNumber),
    blockHash: receipt.blockHash,
    logIndex: confirmed
      ? (receipt.logs.find((log) => log.address.toLowerCase() === contract && log.topics[0] === DOCUMENT_ANCHORED_TOPIC)
          ?.logIndex ?? null)
      : null,
    confirmed,
  })
}

function holdsEvent(context: RelayContext, anchor: ExpectedAnchor, receipt: TransactionReceipt): boolean {
  const event = anchorFromReceipt(receipt, context.chain.contractAddress)
  return (
    event !== undefined &&
    event.compositeHash === (anchor.compositeHash.toLowerCase() as Hex) &&
    event.previousTxHash === (anchor.previousTxHash.toLowerCase() as Hex)
  )
}
