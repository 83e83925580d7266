// Broadcasting a stored anchor transaction: re-issued at a fresh nonce when another transaction took its nonce,
// withdrawn when the node certainly never got it, left to the monitor when nobody can tell.
import type { LocalAccount } from 'viem/accounts'
import { orChainUnavailable } from '../../chain/chain-errors.ts'
import type { Fees } from '../fees.ts'
import type { Slot } from '../outbox/nonces.ts'
import { reissueAnchor, withdrawAnchor } from '../outbox/reservations.ts'
import type { RelayContext } from '../relay-context.ts'
import { type BroadcastOutcome, broadcastRaw } from '../send-raw.ts'
import { type SignedTransaction, signCall, signFiller } from '../signing.ts'
import { resync } from './resync.ts'
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
}

export type BroadcastResult =
  /** The node holds it: its receipt can be waited for. */
  | { kind: 'sent'; tx: SignedTransaction }
  /** The node may hold it, or the monitor took it over: the anchor stays pending and the monitor finishes it. */
  | { kind: 'left-to-monitor' }
  /** Certainly never delivered: the anchor, its counts and its nonce are undone. */
  | { kind: 'withdrawn' }

export async function broadcast(context: RelayContext, params: BroadcastParameters): Promise<BroadcastResult> {
  let { tx, anchor } = params
  let outcome = await sendOwn(context, tx)
  for (let reissues = 0; takenByAnother(outcome) && reissues < MAX_REISSUES; reissues++) {
    ;({ tx, anchor } = await reissue(context, params, anchor))
    outcome = await sendOwn(context, tx)
  }
  if (outcome === 'sent') return { kind: 'sent', tx }
  if (outcome === 'ambiguous') {
    context.log.warn({ txHash: tx.hash }, 'broadcast outcome unknown: left to the monitor')
    return { kind: 'left-to-monitor' }
  }
  // Refused, or its nonce still taken by someone else after every re-issue.
  const withdrawn = await withdrawAnchor(
    context.db,
    params.slot,
    { anchorId: anchor.anchorId, userId: anchor.userId, period: anchor.period, nonce: anchor.nonce },
    (fillerNonce) => signFiller(params.account, context.chain.chainId, fillerNonce, context.fees.last() ?? params.fees),
  )
  // Not withdrawn: the monitor claimed the transaction meanwhile and sends it.
  return withdrawn ? { kind: 'withdrawn' } : { kind: 'left-to-monitor' }
}

/** 'nonce-used' or 'underpriced' by a transaction that is not ours: the key was used elsewhere. */
function takenByAnother(outcome: BroadcastOutcome): boolean {
  return outcome === 'nonce-used' || outcome === 'underpriced'
}

/** Sends, and resolves "nonce used" into "sent" when the node already has our own transaction. */
async function sendOwn(context: RelayContext, tx: SignedTransaction): Promise<BroadcastOutcome> {
  const outcome = await broadcastRaw(context.chain.client, tx.raw)
  if (!takenByAnother(outcome)) return outcome
  const known = await context.chain.client.getTransaction({ hash: tx.hash }).catch(() => null)
  return known ? 'sent' : outcome
}

/** Brings the nonce row in line with the chain, then moves the anchor to a fresh nonce with a newly signed call. */
async function reissue(
  context: RelayContext,
  params: BroadcastParameters,
  anchor: BroadcastParameters['anchor'],
): Promise<{ tx: SignedTransaction; anchor: BroadcastParameters['anchor'] }> {
  const { slot, account, fees } = params
  await orChainUnavailable(() => resync(context, slot, account))
  const call = anchorCall(context, anchor)
  const { tx, nonce } = await reissueAnchor(context.db, slot, anchor.anchorId, (next) =>
    signCall(account, { ...call, nonce: next }, fees),
  )
  return { tx, anchor: { ...anchor, nonce } }
}
