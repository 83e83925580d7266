// The relayer keys: which may take new work (funded, not jammed), and which of them takes the next relay.
import { type Address, formatEther } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainClient } from '../chain/chain-client.ts'

export interface RelayLogger {
  warn(object: object, message: string): void
  error(object: object, message: string): void
  info(object: object, message: string): void
}

interface RelayerState {
  account: LocalAccount
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
  /** Keys being rotated out (`relayer_drains`): they finish their pending transactions but take no new anchors. */
  private draining = new Set<Address>()

  constructor(
    accounts: readonly LocalAccount[],
    private readonly client: ChainClient,
    private readonly minBalance: bigint,
    private readonly log: RelayLogger,
    private readonly onBalance: (address: Address, ether: number) => void = () => {},
    /** False while a key's signer is out of rotation (a token call failed or hung); the monitor asks it too. */
    readonly signerUp: (address: Address) => boolean = () => true,
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

  get all(): readonly { account: LocalAccount; address: Address }[] {
    return this.relayers
  }

  /**
   * The least busy relayer that may take work (ties taken in turn); a jammed one only when no other can. Call
   * `release` with it when the relay is done.
   */
  acquire(): { account: LocalAccount; address: Address } | undefined {
    const signing = this.relayers.filter((r) => this.signerUp(r.address) && !this.draining.has(r.address))
    const candidates = signing.filter((r) => r.funded && !r.jammed)
    const usable = candidates.length > 0 ? candidates : signing.filter((r) => r.funded)
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

  /** `addresses`: lower-case, this chain's drained keys as the database lists them now. */
  setDraining(addresses: ReadonlySet<Address>): void {
    for (const { address } of this.relayers) {
      const draining = addresses.has(address)
      if (draining === this.draining.has(address)) continue
      if (draining) this.log.info({ relayer: address }, 'relayer key draining: no new anchors, pending ones finish')
      else this.log.info({ relayer: address }, 'relayer key no longer draining: taking work')
    }
    this.draining = new Set(addresses)
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
