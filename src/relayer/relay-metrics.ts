// The relayer's Prometheus series: outcomes of relay requests, open anchors, relayer balances, anchors that failed on
// chain, and whether the node serves the contract.
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
  count(outcome: RelayOutcomeLabel): void
}

export function createRelayMetrics(registry: Registry): RelayMetrics {
  const outcomes = new Counter({
    name: 'relay_outcomes_total',
    help: 'POST /api/relay outcomes: confirmed, pending, duplicate, conflict, quota_exceeded, previous_not_found, user_gone, chain_unavailable',
    labelNames: ['outcome'],
    registers: [registry],
  })
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
    failedOnChain: new Counter({
      name: 'relay_anchors_failed_total',
      help: 'Anchor transactions mined without their anchor: reverted, or successful without the DocumentAnchored event (no_event)',
      labelNames: ['reason'],
      registers: [registry],
    }),
    contractMissing: new Gauge({
      name: 'relay_contract_missing',
      help: '1 while the node serves no anchoring contract at CONTRACT_ADDRESS (or another chain): relays are refused',
      registers: [registry],
    }),
    count: (outcome) => outcomes.inc({ outcome }),
  }
}
