// Broadcasting a stored anchor transaction, in nonce order: re-issued at a fresh nonce when the chain shows its nonce
// consumed by a transaction that is not ours, withdrawn only when the node refused it for a reason that excludes it
// ever being mined, left pending to the monitor whenever nobody can tell.
import type { LocalAccount } from 'viem/accounts'
import { orChainUnavailable } from '../../chain/chain-errors.ts'
import type { Fees } from '../fees.ts'
import { reissueAnchor, withdrawAnchor } from '../outbox/reservations.ts'
import type { Slot } from '../outbox/slot.ts'
import { keyAt, type RelayContext } from '../relay-context.ts'
import type { SendOutcome } from '../send-outcome.ts'
import { type SignedTransaction, signCall, signFiller } from '../signing.ts'
import { resync } from './resync.ts'
import { sendInOrder } from './send-in-order.ts'
import { anchorCall, type ReservedAnchor } from './sign-and-attach.ts'

// A node disagreeing about nonces three times in a row for one request means something else is sending with our key.
const MAX_REISSUES = 3

export interface BroadcastParameters {
  slot: Slot
  account: LocalAccount
  anchor: ReservedAnchor & { userId: string; period: string }
  /** The anchor's stored transaction (signAndAttach). */
  tx: SignedTransaction
  fees: Fees
  /** When to stop waiting for lower nonces to reach the node (the request's wait window). */
  until: number
}

export type BroadcastResult =
  /** The node holds it: its receipt can be waited for. */
  | { kind: 'sent'; tx: SignedTransaction }
  /** The node may hold it, or may get it later: the anchor stays pending and the monitor finishes it. */
  | { kind: 'left-to-monitor'; tx: SignedTransaction }
  /** Refused for good (the node's words and the chain agree): the anchor, its counts and its nonce are undone. */
  | { kind: 'withdrawn'; reason: string }

export async function broadcast(context: RelayContext, params: BroadcastParameters): Promise<BroadcastResult> {
  let { tx, anchor } = params
  const send = () => sendInOrder(context, params.slot, { ...tx, nonce: anchor.nonce }, { until: params.until })
  let outcome = await send()
  for (let reissues = 0; outcome.kind === 'nonce-taken' && reissues < MAX_REISSUES; reissues++) {
    context.log.warn(
      { relayer: params.slot.relayer, nonce: anchor.nonce, txHash: tx.hash, reason: outcome.reason },
      'anchor nonce consumed on chain by a transaction that is not ours: re-signing at a fresh nonce',
    )
    const reissued = await reissue(context, params, anchor)
    // One of its transactions was mined meanwhile: nothing to re-sign; the monitor records it.
    if (!reissued) return { kind: 'left-to-monitor', tx }
    ;({ tx, anchor } = reissued)
    outcome = await send()
  }
  if (outcome.kind === 'sent') return { kind: 'sent', tx }
  if (outcome.kind !== 'refused' && outcome.kind !== 'nonce-taken') {
    logLeft(context, params.slot, anchor.nonce, tx, outcome)
    return { kind: 'left-to-monitor', tx }
  }
  // Refused for good, or its nonce still consumed by another after every re-issue: it can never be mined.
  const withdrawn = await withdrawAnchor(
    context.db,
    params.slot,
    { anchorId: anchor.anchorId, userId: anchor.userId, period: anchor.period, nonce: anchor.nonce },
    (fillerNonce) => signFiller(params.account, context.chain.chainId, fillerNonce, context.fees.last() ?? params.fees),
  )
  context.log.warn(
    { relayer: params.slot.relayer, nonce: anchor.nonce, txHash: tx.hash, reason: outcome.reason, withdrawn },
    withdrawn
      ? 'the node refused the anchor transaction for good: anchor withdrawn'
      : 'the node refused the anchor transaction, but it was sent again meanwhile: left to the monitor',
  )
  // Not withdrawn: the monitor (or a gap filling) claimed the transaction meanwhile and sent it.
  return withdrawn ? { kind: 'withdrawn', reason: outcome.reason } : { kind: 'left-to-monitor', tx }
}

function logLeft(context: RelayContext, slot: Slot, nonce: number, tx: SignedTransaction, outcome: SendOutcome) {
  context.log.warn(
    {
      relayer: slot.relayer,
      nonce,
      txHash: tx.hash,
      outcome: outcome.kind,
      reason: 'reason' in outcome ? outcome.reason : undefined,
    },
    'broadcast outcome not certain: the anchor stays pending and the monitor finishes it',
  )
}

/**
 * Brings the nonce row in line with the chain, then moves the anchor to a fresh nonce with a newly signed call;
 * undefined when the anchor is no longer pending.
 */
async function reissue(
  context: RelayContext,
  params: BroadcastParameters,
  anchor: BroadcastParameters['anchor'],
): Promise<{ tx: SignedTransaction; anchor: BroadcastParameters['anchor'] } | undefined> {
  const { slot, account, fees } = params
  await orChainUnavailable(() => resync(context, slot, account))
  const call = anchorCall(context, anchor)
  const reissued = await reissueAnchor(context.db, slot, anchor.anchorId, (next) =>
    signCall(account, { ...call, nonce: next }, fees),
  )
  if (!reissued) return undefined
  keyAt(context, slot).line.expect(reissued.nonce)
  return { tx: reissued.tx, anchor: { ...anchor, nonce: reissued.nonce } }
}
