// The relayer's Prometheus series: outcomes of relay requests, open anchors, relayer balances.
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

export interface RelayMetrics {
  outcomes: Counter<'outcome'>
  pending: Gauge
  balance: Gauge<'relayer'>
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
    count: (outcome) => outcomes.inc({ outcome }),
  }
}
