// What every relayer action (src/relayer/actions/, relay.ts, monitor.ts) works with: the database, the chain, the
// settings, and the parts that keep state across requests (fee oracle, receipt watcher, key pool, batchers). Built
// once per app by src/api/plugins/relayer.ts.
import type { Address } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainContext } from '../chain/chain-context.ts'
import { ContractWatch } from '../chain/contract-check.ts'
import type { Config, RelaySettings } from '../config.ts'
import type { Database } from '../db/database.ts'
import { reconcileWithChain } from './actions/reconcile.ts'
import { FeeOracle } from './fees.ts'
import { GroupCommit } from './group-commit.ts'
import { type AnchorRow, type Mined, markMined } from './outbox/anchors.ts'
import type { Attachment, NewAnchor, Quota, ReserveResult } from './outbox/reservations.ts'
import type { Slot } from './outbox/slot.ts'
import { ReceiptWatcher } from './receipt-watcher.ts'
import { Reconciliation } from './reconciliation.ts'
import type { AnchorFailure } from './relay-metrics.ts'
import { RelayerPool, type RelayLogger } from './relayer-pool.ts'
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

/** What the relayer takes from the service's configuration, as the service and `npm run admin` build it. */
export function relayerSettingsOf(
  config: Pick<Config, 'relay' | 'plans' | 'defaultPlan' | 'chain'>,
): Pick<RelayerDependencies, 'settings' | 'quota' | 'pollingIntervalMs'> {
  return {
    settings: config.relay,
    quota: { plans: config.plans, defaultPlan: config.defaultPlan },
    pollingIntervalMs: config.chain.pollingIntervalMs,
  }
}

export function createRelayContext(deps: RelayerDependencies): RelayContext {
  const context: RelayContext = {
    ...deps,
    fees: new FeeOracle(deps.chain.client, deps.settings),
    watcher: new ReceiptWatcher(
      deps.chain.client,
      deps.pollingIntervalMs,
      deps.chain.relayers.map((relayer) => relayer.address),
    ),
    contract: new ContractWatch(deps.chain.client, deps.chain.chainId, deps.chain.contractAddress, (state, was) => {
      deps.onContractMissing?.(state !== 'ok')
      const where = { contract: deps.chain.contractAddress, chainId: deps.chain.chainId, state }
      if (state !== 'ok')
        deps.log.error({ ...where, was }, 'ALERT the node does not serve the contract: relays are refused')
      else if (was !== 'unknown') deps.log.info(where, 'the node serves the contract again: relays resume')
    }),
    pool: new RelayerPool(
      deps.chain.relayers,
      deps.chain.client,
      deps.settings.minBalance,
      deps.log,
      deps.onBalance,
      (address) => deps.chain.signerHealth?.isUp(address) ?? true,
    ),
    batches: {
      reservations: new Map(),
      attachments: new Map(),
      confirmations: new GroupCommit((items: Mined[]) => markMined(deps.db, items)),
    },
    nonceRows: new Map(),
    lines: new Map(),
    reconciliation: new Reconciliation(
      (options) => reconcileWithChain(context, options),
      (report, reasons) => {
        const found = report.recovered + report.adopted
        const summary = { ...report, reasons }
        if (found > 0 || report.raised.length > 0)
          deps.log.warn(summary, 'reconciled with the chain: found what the database forgot')
        else deps.log.info(summary, 'reconciled with the chain: the database knows everything the keys did')
      },
    ),
  }
  return context
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
