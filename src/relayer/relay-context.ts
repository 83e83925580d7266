// What every relayer action (src/relayer/actions/, relay.ts, monitor.ts) works with: the database, the chain, the
// settings, and the parts that keep state across requests (fee oracle, receipt watcher, key pool, batchers). Built
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
import type { RelayerPool, RelayLogger } from './relayer-pool.ts'
import { SendLine } from './send-line.ts'

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
  pool: RelayerPool
  /** Writes shared by concurrent relays, one batcher per relayer slot (each holds its own nonce row). */
  batches: {
    reservations: Map<string, GroupCommit<NewAnchor, ReserveResult>>
    attachments: Map<string, GroupCommit<Attachment, boolean>>
    /** One for all relayers: recording receipts locks only the anchors themselves. */
    confirmations: GroupCommit<Mined, AnchorRow | undefined>
  }
  /** Per relayer: its nonce row exists (created from the chain's count once per process, or by a resync). */
  nonceRows: Map<string, Promise<void>>
  /** Per relayer: which of its nonces the node holds, and which this process is about to send (send-in-order.ts). */
  lines: Map<string, SendLine>
  /** Whether relays must wait for a reconciliation with the chain (at start, after a failover). */
  reconciliation: Reconciliation
}

/** Where a relayer's rows live: its address lower-case, as the database stores it. */
export function slotOf(context: RelayContext, address: Address): Slot {
  return { chainId: context.chain.chainId, relayer: address.toLowerCase() as Address }
}

export function lineOf(context: RelayContext, slot: Slot): SendLine {
  let line = context.lines.get(slot.relayer)
  if (!line) {
    line = new SendLine()
    context.lines.set(slot.relayer, line)
  }
  return line
}

/** The key of a relayer address (any case); undefined for an address not among the service's keys. */
export function accountOf(context: RelayContext, address: string): LocalAccount | undefined {
  const lower = address.toLowerCase()
  return context.pool.all.find((r) => r.address === lower)?.account
}
