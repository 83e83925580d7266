// What every relayer action (src/relayer/actions/, relay.ts, monitor.ts) works with: the database, the chain, the
// settings, and the parts that keep state across requests (fee oracle, receipt watcher, the keys, batchers). Built
// once per app by create-relay-context.ts, which sits above the actions it wires in.
import type { Address } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainContext } from '../chain/chain-context.ts'
import type { ContractWatch } from '../chain/contract-check.ts'
import type { RelaySettings } from '../config/relay-settings.ts'
import type { Database } from '../db/database.ts'
import type { FeeOracle } from './fees.ts'
import type { GroupCommit } from './group-commit.ts'
import type { AnchorRow, Mined } from './outbox/anchors.ts'
import type { Attachment, NewAnchor, Quota, ReserveResult } from './outbox/reservations.ts'
import type { Slot } from './outbox/slot.ts'
import type { ReceiptWatcher } from './receipt-watcher.ts'
import type { Reconciliation } from './reconciliation.ts'
import type { AnchorFailure } from './relay-metrics.ts'
import type { RelayerKey } from './relayer-key.ts'
import type { RelayerPool, RelayLogger } from './relayer-pool.ts'

export interface RelayerDependencies {
  db: Database
  chain: ChainContext
  settings: RelaySettings
  quota: Quota
  pollingIntervalMs: number
  log: RelayLogger
  onBalance?: (address: Address, ether: number) => void
  /** An anchor's transaction was mined without its anchor (reverted, or no event: the contract is not there). */
  onAnchorFailed?: (reason: AnchorFailure) => void
  /** The relayer's view of the contract changed: missing (or another chain) stops new anchors. */
  onContractMissing?: (missing: boolean) => void
  /** A reconciliation recorded a transaction the database had forgotten. */
  onReconciled?: (kind: 'recovered' | 'adopted' | 'doubled') => void
}

export interface RelayContext extends RelayerDependencies {
  fees: FeeOracle
  watcher: ReceiptWatcher
  /** Whether the node still serves the contract: no new anchors while it is known missing. */
  contract: ContractWatch
  /** The keys, each with what this process holds about it between requests (relayer-key.ts). */
  pool: RelayerPool
  /** Writes shared by concurrent relays, one batcher per relayer slot (each holds its own nonce row). */
  batches: {
    reservations: Map<string, GroupCommit<NewAnchor, ReserveResult>>
    attachments: Map<string, GroupCommit<Attachment, boolean>>
    /** One for all relayers: recording receipts locks only the anchors themselves. */
    confirmations: GroupCommit<Mined, AnchorRow | undefined>
  }
  /** Whether relays must wait for a reconciliation with the chain (at start, after a failover). */
  reconciliation: Reconciliation
}

/** Where a relayer's rows live: its address lower-case, as the database stores it. */
export function slotOf(context: RelayContext, address: Address): Slot {
  return { chainId: context.chain.chainId, relayer: address.toLowerCase() as Address }
}

/** The key a slot's relayer works with: only ever a key of the service's, which the caller took from the pool. */
export function keyAt(context: RelayContext, slot: Slot): RelayerKey {
  const key = context.pool.key(slot.relayer)
  if (!key) throw new Error(`relayer ${slot.relayer} is not among the service's keys`)
  return key
}

/** The key of a relayer address (any case); undefined for an address not among the service's keys. */
export function accountOf(context: RelayContext, address: string): LocalAccount | undefined {
  return context.pool.key(address)?.account
}
