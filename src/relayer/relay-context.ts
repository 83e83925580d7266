// What every relayer action (src/relayer/actions/, relay.ts, monitor.ts) works with: the database, the chain, the
// settings, and the parts that keep state across requests (fee oracle, receipt watcher, key pool, batchers). Built
// once per app by src/api/plugins/relayer.ts.
import type { Address } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainContext } from '../chain/chain-context.ts'
import type { RelaySettings } from '../config.ts'
import type { Database } from '../db/database.ts'
import { FeeOracle } from './fees.ts'
import { GroupCommit } from './group-commit.ts'
import { type AnchorRow, type Mined, markMined } from './outbox/anchors.ts'
import type { Slot } from './outbox/nonces.ts'
import type { Attachment, NewAnchor, Quota, ReserveResult } from './outbox/reservations.ts'
import { ReceiptWatcher } from './receipt-watcher.ts'
import { RelayerPool, type RelayLogger } from './relayer-pool.ts'

export interface RelayerDependencies {
  db: Database
  chain: ChainContext
  settings: RelaySettings
  quota: Quota
  pollingIntervalMs: number
  log: RelayLogger
  onBalance?: (address: Address, ether: number) => void
}

export interface RelayContext extends RelayerDependencies {
  fees: FeeOracle
  watcher: ReceiptWatcher
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
}

export function createRelayContext(deps: RelayerDependencies): RelayContext {
  return {
    ...deps,
    fees: new FeeOracle(deps.chain.client, deps.settings),
    watcher: new ReceiptWatcher(deps.chain.client, deps.pollingIntervalMs),
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
  }
}

/** Where a relayer's rows live: its address lower-case, as the database stores it. */
export function slotOf(context: RelayContext, address: Address): Slot {
  return { chainId: context.chain.chainId, relayer: address.toLowerCase() as Address }
}

/** The key of a relayer address (any case); undefined for an address not among the service's keys. */
export function accountOf(context: RelayContext, address: string): LocalAccount | undefined {
  const lower = address.toLowerCase()
  return context.pool.all.find((r) => r.address === lower)?.account
}
