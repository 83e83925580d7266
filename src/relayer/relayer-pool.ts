// The relayer keys: which may take new work (funded, not jammed), and which of them takes the next relay.
import { type Address, formatEther } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { ChainClient } from '../chain/chain-client.ts'

export interface RelayLogger {
  warn(object: object, message: string): void
  error(object: object, message: string): void
  info(object: object, message: string): void
}

interface RelayerState {
  account: PrivateKeyAccount
  /** Lower-case: the form stored in the database. */
  address: Address
  balance: bigint | undefined
  funded: boolean
  /** Its lowest pending transaction sits at the fee cap and does not move. */
  jammed: boolean
  inFlight: number
}

export class RelayerPool {
  private readonly relayers: RelayerState[]
  private cursor = 0

  constructor(
    accounts: readonly PrivateKeyAccount[],
    private readonly client: ChainClient,
    private readonly minBalance: bigint,
    private readonly log: RelayLogger,
    private readonly onBalance: (address: Address, ether: number) => void = () => {},
  ) {
    this.relayers = accounts.map((account) => ({
      account,
      address: account.address.toLowerCase() as Address,
      balance: undefined,
      // Until the first balance is read, assume it can work: the node refuses an unfunded transaction anyway.
      funded: true,
      jammed: false,
      inFlight: 0,
    }))
  }

  get all(): readonly { account: PrivateKeyAccount; address: Address }[] {
    return this.relayers
  }

  /**
   * The least busy relayer that may take work (ties taken in turn); a jammed one only when no other can. Call
   * `release` with it when the relay is done.
   */
  acquire(): { account: PrivateKeyAccount; address: Address } | undefined {
    const candidates = this.relayers.filter((r) => r.funded && !r.jammed)
    const usable = candidates.length > 0 ? candidates : this.relayers.filter((r) => r.funded)
    if (usable.length === 0) return undefined
    let best: RelayerState | undefined
    for (let i = 0; i < usable.length; i++) {
      const candidate = usable[(this.cursor + i) % usable.length]!
      if (!best || candidate.inFlight < best.inFlight) best = candidate
    }
    this.cursor = (this.cursor + 1) % usable.length
    best!.inFlight += 1
    return best
  }

  release(address: Address): void {
    const state = this.find(address)
    if (state) state.inFlight -= 1
  }

  setJammed(address: Address, jammed: boolean): void {
    const state = this.find(address)
    if (state) state.jammed = jammed
  }

  async refreshBalances(): Promise<void> {
    await Promise.all(
      this.relayers.map(async (state) => {
        const balance = await this.client.getBalance({ address: state.account.address })
        state.balance = balance
        this.onBalance(state.address, Number(formatEther(balance)))
        const funded = balance >= this.minBalance
        if (funded !== state.funded) {
          if (funded) this.log.info({ relayer: state.address }, 'relayer funded again: taking work')
          else {
            this.log.error(
              {
                relayer: state.address,
                balanceEther: formatEther(balance),
                minimumEther: formatEther(this.minBalance),
              },
              'ALERT relayer balance below the minimum: it takes no new work until funded',
            )
          }
        }
        state.funded = funded
      }),
    )
  }

  private find(address: string): RelayerState | undefined {
    const lower = address.toLowerCase()
    return this.relayers.find((r) => r.address === lower)
  }
}
