// Relaying: plans and their monthly quotas, and how the relayer waits, confirms, re-sends, bumps fees and watches for
// reorgs.
import { z } from 'zod'
import { type EnvValues, integer } from './env-fields.ts'

/** `free:100,pro:5000` → { free: 100, pro: 5000 }: monthly anchor limits per plan. */
const plans = z
  .string()
  .default('free:100')
  .transform((value, ctx) => {
    const result: Record<string, number> = {}
    for (const entry of value.split(',')) {
      const match = /^\s*([a-z][a-z0-9_-]*)\s*:\s*(\d+)\s*$/.exec(entry)
      if (!match) {
        ctx.addIssue({ code: 'custom', message: `expected "plan:limit" pairs such as "free:100", got "${entry}"` })
        return z.NEVER
      }
      result[match[1]!] = Number(match[2])
    }
    return result
  })

export const relayEnv = {
  PLANS: plans,
  DEFAULT_PLAN: z.string().default('free'),
  /** How long POST /api/relay waits for the receipt before answering 202 pending. */
  RELAY_WAIT_MS: integer(15_000),
  RELAY_CONFIRMATIONS: integer(1, 1),
  /** Period of the background relay monitor; 0 turns it off (tests that drive it by hand). */
  RELAY_MONITOR_INTERVAL_MS: z.coerce.number().int().min(0).optional(),
  /** A transaction without a receipt for this long is replaced with a higher fee. */
  RELAY_STUCK_AFTER_MS: z.coerce.number().int().min(1).optional(),
  RELAY_FEE_BUMP_PERCENT: integer(12, 10),
  RELAY_MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().default(500),
  RELAY_GAS_LIMIT: integer(40_000, 21_000),
  RELAY_MIN_BALANCE_ETH: z.coerce.number().min(0).default(0.01),
  RELAY_FEE_CACHE_MS: integer(3_000),
  RELAY_REORG_WATCH_BLOCKS: integer(64, 1),
  /** Blocks deep at which an anchor's owner is told `anchor.finalized`. */
  FINALITY_CONFIRMATIONS: z.coerce.number().int().min(1).optional(),
  /** Where a reconciliation with the chain starts when the database knows no mined anchor (the contract's block). */
  RELAY_RECONCILE_FROM_BLOCK: integer(0),
  /** Blocks per eth_getLogs call of a reconciliation: providers cap the range (2,000 is under the common caps). */
  RELAY_RECONCILE_LOG_BLOCKS: integer(2_000, 1),
}

/** `embeddedChain`: no RPC_URL, the local chain that mines in milliseconds. */
export function relaySettings(e: EnvValues<typeof relayEnv>, embeddedChain: boolean, problems: string[]) {
  if (!(e.DEFAULT_PLAN in e.PLANS)) problems.push(`DEFAULT_PLAN: "${e.DEFAULT_PLAN}" is not one of PLANS`)
  // Ethereum finalizes two epochs (64 blocks) behind its head; the local chain mines a block per relay.
  const finalityConfirmations = e.FINALITY_CONFIRMATIONS ?? Math.max(e.RELAY_CONFIRMATIONS, embeddedChain ? 2 : 64)
  if (finalityConfirmations < e.RELAY_CONFIRMATIONS) {
    problems.push('FINALITY_CONFIRMATIONS: must be at least RELAY_CONFIRMATIONS (an anchor is final after confirmed)')
  }
  return {
    plans: e.PLANS,
    defaultPlan: e.DEFAULT_PLAN,
    relay: {
      waitMs: e.RELAY_WAIT_MS,
      /** Blocks a receipt must be deep before its anchor counts as confirmed. */
      confirmations: e.RELAY_CONFIRMATIONS,
      // A local chain mines in milliseconds, so a transaction waiting seconds there is stuck; a public one is not.
      /** 0: no background monitor. */
      monitorIntervalMs: e.RELAY_MONITOR_INTERVAL_MS ?? (embeddedChain ? 500 : 5_000),
      stuckAfterMs: e.RELAY_STUCK_AFTER_MS ?? (embeddedChain ? 3_000 : 90_000),
      feeBumpPercent: e.RELAY_FEE_BUMP_PERCENT,
      /** Wei; no transaction is ever signed above it. */
      maxFeePerGas: BigInt(Math.round(e.RELAY_MAX_FEE_PER_GAS_GWEI * 1e9)),
      gasLimit: BigInt(e.RELAY_GAS_LIMIT),
      /** Wei; a relayer below it takes no new work. */
      minBalance: BigInt(Math.round(e.RELAY_MIN_BALANCE_ETH * 1e9)) * 1_000_000_000n,
      feeCacheMs: e.RELAY_FEE_CACHE_MS,
      /** Blocks a confirmed anchor must be deep before its owner is told it is final. */
      finalityConfirmations,
      /** Confirmed anchors this many blocks deep or less are re-checked for reorgs. */
      reorgWatchBlocks: e.RELAY_REORG_WATCH_BLOCKS,
      reconcile: {
        /** The first block scanned when the database knows no mined anchor of the relayer keys. */
        fromBlock: e.RELAY_RECONCILE_FROM_BLOCK,
        /** Blocks per eth_getLogs call. */
        logBlocks: e.RELAY_RECONCILE_LOG_BLOCKS,
      },
    },
  }
}

export type RelaySettings = ReturnType<typeof relaySettings>['relay']
