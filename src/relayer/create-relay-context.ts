// Builds the relayer's context: the one place that wires the actions (reconciling with the chain) into the stateful
// parts the actions then work with (relay-context.ts), so that no action's module imports its own assembly.
import { ContractWatch } from '../chain/contract-check.ts'
import type { Config } from '../config/load-config.ts'
import { reconcileWithChain } from './actions/reconcile.ts'
import { FeeOracle } from './fees.ts'
import { GroupCommit } from './group-commit.ts'
import { type Mined, markMined } from './outbox/anchors.ts'
import { ReceiptWatcher } from './receipt-watcher.ts'
import { Reconciliation } from './reconciliation.ts'
import type { RelayContext, RelayerDependencies } from './relay-context.ts'
import { RelayerPool } from './relayer-pool.ts'

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
      confirmations: new GroupCommit((items: Mined[]) => markMined(deps.db, items, deps.chain.contractAddress)),
    },
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
