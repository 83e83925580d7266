// The outbox's states and every way they change: what the relayer may do to an anchor and to a relay transaction, in
// one list. Each writer of a status takes its transition from here, `to` as the new status and `from` as its SQL
// guard, so a status changes only in a way this file names; test/relay/outbox-transitions.test.ts drives each writer
// from every status. What the anchor's owner is told (confirmed, reorged, failed) is named on the transition that
// causes it; its writer records that event in the same transaction (drizzle/functions/anchor_event.sql, src/events/).
// A first confirmation also tells the owner of the anchor it countersigns; `anchor.finalized` is the monitor's finality
// pass (finalizeAnchors), which changes no status.
//
// Outside the list, rows are born and die: a relay reserves an anchor `pending` with an unsigned tx_hash
// (UNSIGNED_PREFIX) and stores its transaction `signed` (a fee-bumped replacement `broadcast`, as it goes out at
// once); a reconciliation records a transaction it found on chain as `mined`, `broadcast` (not yet deep enough) or
// `failed` (the composite hash anchored twice); a relay whose send certainly never reached the node deletes its anchor
// and its `signed` rows (withdrawAnchor).
import { type SQL, sql } from 'drizzle-orm'
import type { ANCHOR_STATUSES, RELAY_TRANSACTION_STATUSES } from '../../db/schema.ts'

export type AnchorStatus = (typeof ANCHOR_STATUSES)[number]
export type RelayTransactionStatus = (typeof RELAY_TRANSACTION_STATUSES)[number]

/** What the anchor's owner is told (`anchor.<event>`). */
export type AnchorEvent = 'confirmed' | 'reorged' | 'failed'

export interface Transition<Status extends string> {
  readonly from: readonly Status[]
  readonly to: Status
  /** When it happens, and which writer makes it. */
  readonly when: string
  readonly event?: AnchorEvent
}

const ALL_ANCHOR: readonly AnchorStatus[] = ['pending', 'confirmed', 'failed']
/** A relay transaction not yet known mined or replaced: the monitor's work. */
const OPEN: readonly RelayTransactionStatus[] = ['signed', 'broadcast']
/** Every status but `failed`, which nothing leaves. */
const NOT_FAILED: readonly RelayTransactionStatus[] = ['signed', 'broadcast', 'mined', 'replaced']

export const ANCHOR_TRANSITIONS = {
  mined: {
    // A confirmed anchor comes back here after a reorg put its transaction in another block; a failed one has no
    // open transaction left, so in practice the anchor was pending or confirmed.
    from: ALL_ANCHOR,
    to: 'confirmed',
    event: 'confirmed',
    when: 'its receipt holds its DocumentAnchored event, confirmations deep (mark_mined, via markMined)',
  },
  reverted: {
    from: ALL_ANCHOR,
    to: 'failed',
    event: 'failed',
    when: 'its transaction mined without its event: reverted, or no contract at the address (mark_mined)',
  },
  nonceTaken: {
    from: ['pending'],
    to: 'pending',
    when:
      'another transaction used its nonce: it is signed again at a fresh nonce (reissueAnchor; an anchor mined ' +
      'meanwhile is left as it is, and nothing is signed)',
  },
  feeBumped: {
    from: ['pending'],
    to: 'pending',
    when:
      'its transaction was stuck: a replacement at a higher fee becomes its provisional transaction (addReplacement; ' +
      'for an anchor mined meanwhile nothing is stored or sent)',
  },
  displaced: {
    from: ALL_ANCHOR,
    to: 'pending',
    event: 'reorged',
    when:
      'a reconciliation found a forgotten transaction mined at its nonce: unsigned again at a fresh nonce ' +
      '(recordChainAnchor; told as a reorg only when it was confirmed)',
  },
  adoptedFinal: {
    from: ['pending', 'failed'],
    to: 'confirmed',
    event: 'confirmed',
    when:
      'a reconciliation found its composite hash mined, confirmations deep, by a transaction the database forgot ' +
      '(recordChainAnchor; a confirmed anchor is not adopted: under another hash it is reported doubled)',
  },
  adoptedShallow: {
    from: ['pending', 'failed'],
    to: 'pending',
    when: 'as adoptedFinal, not yet confirmations deep: the monitor confirms it (recordChainAnchor)',
  },
} as const satisfies Record<string, Transition<AnchorStatus>>

export const RELAY_TRANSACTION_TRANSITIONS = {
  claimed: {
    from: ['signed'],
    to: 'broadcast',
    when:
      'the monitor (or a relay sending in nonce order) takes over a transaction only its request had sent: that ' +
      'request may no longer withdraw it (claimForBroadcast)',
  },
  minedHash: {
    from: NOT_FAILED,
    to: 'mined',
    when: "the anchor's hash that got mined, whichever of its hashes it was (mark_mined)",
  },
  outmined: {
    from: NOT_FAILED,
    to: 'replaced',
    when: "the anchor's other hashes, once one of them got mined (mark_mined)",
  },
  fillerMined: {
    from: OPEN,
    to: 'mined',
    when: "a filler's self-transfer mined, confirmations deep (markFillerDone)",
  },
  fillerOutrun: {
    from: OPEN,
    to: 'failed',
    when:
      "another transaction of the key used a filler's nonce (markFillerDone; a reconciliation retiring the " +
      'fillers at a nonce it found used)',
  },
  fillerPassed: {
    from: ['signed'],
    to: 'failed',
    when: 'the nonce authority was raised past an unsent filler, whose nonce the chain consumed (nonceAuthorityPastChain)',
  },
  nonceTaken: {
    from: ['signed', 'broadcast', 'replaced'],
    to: 'failed',
    when: "another transaction used its anchor's nonce; the anchor moves to a fresh one (reissueAnchor)",
  },
  superseded: {
    from: OPEN,
    to: 'replaced',
    when:
      'a reconciliation gave its anchor a transaction found on chain, or a fresh nonce (recordChainAnchor, ' +
      'replaceOpenTransactions)',
  },
  reorged: {
    from: ['mined'],
    to: 'broadcast',
    event: 'reorged',
    when: "a reorg took a confirmed anchor's transaction out of its block: the same transaction is open again (reopenMined)",
  },
} as const satisfies Record<string, Transition<RelayTransactionStatus>>

/** `status IN (…)` of the statuses a transition leaves: the guard of its writer's UPDATE. */
export function leaves(transition: Transition<string>): SQL {
  return sql`status IN (${sql.join(
    transition.from.map((status) => sql`${status}`),
    sql`, `,
  )})`
}
