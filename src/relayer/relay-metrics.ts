// The relayer's Prometheus series: outcomes of relay requests, open anchors, relayer balances, anchors that failed on
// chain, whether the node serves the contract, and anchors a reconciliation found that the database had forgotten.
import { Counter, Gauge, type Registry } from 'prom-client'

/** The `outcome` label of relay_outcomes_total; the failures' labels come from src/api/domain-problems.ts. */
export type RelayOutcomeLabel =
  | 'confirmed'
  | 'pending'
  | 'duplicate'
  | 'conflict'
  | 'quota_exceeded'
  | 'previous_not_found'
  | 'user_gone'
  | 'chain_unavailable'

/** Why an anchor's transaction was mined without its anchor: it reverted, or succeeded without the event. */
export type AnchorFailure = 'reverted' | 'no_event'

export interface RelayMetrics {
  outcomes: Counter<'outcome'>
  pending: Gauge
  balance: Gauge<'relayer'>
  failedOnChain: Counter<'reason'>
  contractMissing: Gauge
  reconciled: Counter<'kind'>
  count(outcome: RelayOutcomeLabel): void
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  const outcomes = new Counter({
    name: 'relay_outcomes_total',
    help: 'POST /api/relay outcomes: confirmed, pending, duplicate, conflict, quota_exceeded, previous_not_found, user_gone, chain_unavailable',
    labelNames: ['outcome'],
    registers: [registry],
  })
  const reconciled = new Counter({
    name: 'relay_anchors_reconciled_total',
    help: 'Mined anchor transactions the database had forgotten, found on chain by a reconciliation: recovered (recorded without ciphertext), adopted (an anchor of the same composite hash re-attached), doubled (its composite hash was on chain twice)',
    labelNames: ['kind'],
    registers: [registry],
  })
  const failedOnChain = new Counter({
    name: 'relay_anchors_failed_total',
    help: 'Anchor transactions mined without their anchor: reverted, or successful without the DocumentAnchored event (no_event)',
    labelNames: ['reason'],
    registers: [registry],
  })
  // Every series from the start at 0: an alert on increase() sees the first event, not a series appearing at 1.
  for (const kind of ['recovered', 'adopted', 'doubled']) reconciled.inc({ kind }, 0)
  for (const reason of ['reverted', 'no_event']) failedOnChain.inc({ reason }, 0)
  return {
    outcomes,
    pending: new Gauge({
      name: 'relay_pending_transactions',
      help: 'Anchors whose transaction is signed but not yet confirmed (as of the last monitor pass)',
      registers: [registry],
    }),
    balance: new Gauge({
      name: 'relayer_balance_ether',
      help: 'Balance of each relayer key, in ether',
      labelNames: ['relayer'],
      registers: [registry],
    }),
    failedOnChain,
    contractMissing: new Gauge({
      name: 'relay_contract_missing',
      help: '1 while the node serves no anchoring contract at CONTRACT_ADDRESS (or another chain): relays are refused',
      registers: [registry],
    }),
    reconciled,
    count: (outcome) => outcomes.inc({ outcome }),
  }
}
