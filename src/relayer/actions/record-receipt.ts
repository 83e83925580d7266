// Recording where an anchor's transaction was mined (whichever of its hashes it was), batched with concurrent ones.
import type { TransactionReceipt } from 'viem'
import type { AnchorRow } from '../outbox/anchors.ts'
import type { RelayContext } from '../relay-context.ts'

/** The anchor as it is now; undefined when it no longer exists. */
export function recordReceipt(
  context: RelayContext,
  anchorId: string,
  receipt: TransactionReceipt,
): Promise<AnchorRow | undefined> {
  const reverted = receipt.status !== 'success'
  if (reverted) context.log.error({ txHash: receipt.transactionHash }, 'ALERT anchor transaction reverted on chain')
  return context.batches.confirmations.submit({
    anchorId,
    txHash: receipt.transactionHash.toLowerCase(),
    blockNumber: Number(receipt.blockNumber),
    reverted,
  })
}
