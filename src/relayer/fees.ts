// EIP-1559 fees from the node, cached briefly (every relay would otherwise cost a round trip) and never above the cap.
import type { ChainClient } from '../chain/chain-client.ts'

export interface Fees {
  maxFeePerGas: bigint
  maxPriorityFeePerGas: bigint
}

export class FeeOracle {
  private cached: { fees: Fees; at: number } | undefined
  private inflight: Promise<Fees> | undefined

  constructor(
    private readonly client: ChainClient,
    private readonly settings: { maxFeePerGas: bigint; feeCacheMs: number },
  ) {}

  /** Fees for a new transaction; throws when the node cannot be asked and nothing recent is known. */
  async current(): Promise<Fees> {
    const cached = this.cached
    if (cached && Date.now() - cached.at < this.settings.feeCacheMs) return cached.fees
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = undefined
    })
    return this.inflight
  }

  /** The last fees known, without asking the node: fillers are signed with them while the node is down. */
  last(): Fees | undefined {
    return this.cached?.fees
  }

  /** A replacement's fees: at least `percent` above the old ones (nodes demand 10 %), at least today's, capped. */
  bump(old: Fees, percent: number, now: Fees): Fees {
    const raise = (value: bigint) => (value * BigInt(100 + percent) + 99n) / 100n
    const cap = this.settings.maxFeePerGas
    const maxFeePerGas = min(max(raise(old.maxFeePerGas), now.maxFeePerGas), cap)
    const maxPriorityFeePerGas = min(max(raise(old.maxPriorityFeePerGas), now.maxPriorityFeePerGas), maxFeePerGas)
    return { maxFeePerGas, maxPriorityFeePerGas }
  }

  get cap(): bigint {
    return this.settings.maxFeePerGas
  }

  private async fetch(): Promise<Fees> {
    const [block, priority] = await Promise.all([
      this.client.getBlock({ blockTag: 'latest' }),
      this.client.estimateMaxPriorityFeePerGas(),
    ])
    const baseFee = block.baseFeePerGas ?? 0n
    // Twice the base fee rides out six full blocks of +12.5 % before the transaction would wait.
    const maxFeePerGas = min(baseFee * 2n + priority, this.settings.maxFeePerGas)
    const fees = { maxFeePerGas, maxPriorityFeePerGas: min(priority, maxFeePerGas) }
    this.cached = { fees, at: Date.now() }
    return fees
  }
}

const min = (a: bigint, b: bigint) => (a < b ? a : b)
const max = (a: bigint, b: bigint) => (a > b ? a : b)
