// Signing a reserved anchor's transaction and storing it before anyone broadcasts it (persist before broadcast).
import type { Hex } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import { ChainUnavailableError } from '../../chain/chain-errors.ts'
import type { Fees } from '../fees.ts'
import { groupFor } from '../group-commit.ts'
import { type Attachment, attachSigned } from '../outbox/reservations.ts'
import type { Slot } from '../outbox/slot.ts'
import type { RelayContext } from '../relay-context.ts'
import { anchorCallData, type SignedTransaction, signCall } from '../signing.ts'

export interface ReservedAnchor {
  anchorId: string
  nonce: number
  compositeHash: Hex
  previousTxHash: Hex
}

/** The call every anchor transaction makes, at any nonce (a re-issue signs it again at a fresh one). */
export function anchorCall(context: RelayContext, anchor: Pick<ReservedAnchor, 'compositeHash' | 'previousTxHash'>) {
  return {
    chainId: context.chain.chainId,
    to: context.chain.contractAddress,
    data: anchorCallData(anchor.compositeHash, anchor.previousTxHash),
    gas: context.settings.gasLimit,
  }
}

/**
 * The signed transaction, stored (in one statement shared with concurrent relays); undefined when someone else signed
 * the anchor first (the monitor, finishing a reservation a request left, or that request itself). A key that failed
 * or hung (a token's) rejects with ChainUnavailableError: the reservation stays, for the monitor to sign later.
 */
export async function signAndAttach(
  context: RelayContext,
  slot: Slot,
  account: LocalAccount,
  anchor: ReservedAnchor,
  fees: Fees,
): Promise<SignedTransaction | undefined> {
  const signed = await signCall(account, { ...anchorCall(context, anchor), nonce: anchor.nonce }, fees).catch(
    (error: unknown) => {
      throw new ChainUnavailableError('The relayer key could not sign; try again later', { cause: error })
    },
  )
  const attachment: Attachment = { anchorId: anchor.anchorId, nonce: anchor.nonce, signed }
  const attached = await groupFor(context.batches.attachments, slot.relayer, (items: Attachment[]) =>
    attachSigned(context.db, slot, items),
  ).submit(attachment)
  return attached ? signed : undefined
}
