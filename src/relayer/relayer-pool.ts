// The relayer keys (relayer-key.ts): which may take new work (funded, not jammed, not draining), and which of them
// takes the next relay.
import { type Address, formatEther } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainClient } from '../chain/chain-client.ts'
import { RelayerKey } from './relayer-key.ts'

export interface RelayLogger {
  warn(object: object, message: string): void
  error(object: object, message: string): void
  info(object: object, message: string): void
}

export class RelayerPool {
  private readonly relayers: RelayerKey[]
  private cursor = 0

  constructor(
    accounts: readonly LocalAccount[],
    private readonly client: ChainClient,
    private readonly minBalance: bigint,
    private readonly log: RelayLogger,
    private readonly onBalance: (address: Address, ether: number) => void = () => {},
    /** False while a key's signer is out of rotation (a token call failed or hung); the monitor asks it too. */
    readonly signerUp: (address: Address) => boolean = () => true,
  ) {
    this.relayers = accounts.map((account) => new RelayerKey(account))
  }

  get all(): readonly RelayerKey[] {
    return this.relayers
  }

  /** The key at a relayer address (any case); undefined for an address not among the service's keys. */
  key(address: string): RelayerKey | undefined {
    const lower = address.toLowerCase()
    return this.relayers.find((r) => r.address === lower)
  }

  /**
   * The least busy relayer that may take work (ties taken in turn); a jammed one only when no other can. Call
   * `release` with it when the relay is done.
   */
  acquire(): RelayerKey | undefined {
    const signing = this.relayers.filter((r) => this.signerUp(r.address) && !r.draining)
    const candidates = signing.filter((r) => r.funded && !r.jammed)
    const usable = candidates.length > 0 ? candidates : signing.filter((r) => r.funded)
    if (usable.length === 0) return undefined
    let best: RelayerKey | undefined
    for (let i = 0; i < usable.length; i++) {
      const candidate = usable[(this.cursor + i) % usable.length]!
      if (!best || candidate.inFlight < best.inFlight) best = candidate
    }
    this.cursor = (this.cursor + 1) % usable.length
    best!.inFlight += 1
    return best
  }

  release(key: RelayerKey): void {
    key.inFlight -= 1
  }

  /** `addresses`: lower-case, this chain's drained keys as the database lists them now. */
  setDraining(addresses: ReadonlySet<Address>): void {
    for (const key of this.relayers) {
      const draining = addresses.has(key.address)
      if (draining === key.draining) continue
      key.draining = draining
      if (draining) this.log.info({ relayer: key.address }, 'relayer key draining: no new anchors, pending ones finish')
      else this.log.info({ relayer: key.address }, 'relayer key no longer draining: taking work')
    }
  }

  async refreshBalances(): Promise<void> {
    await Promise.all(
      this.relayers.map(async (key) => {
        const balance = await this.client.getBalance({ address: key.account.address })
        this.onBalance(key.address, Number(formatEther(balance)))
        const funded = balance >= this.minBalance
        if (funded !== key.funded) {
          if (funded) this.log.info({ relayer: key.address }, 'relayer funded again: taking work')
          else {
            this.log.error(
              {
                relayer: key.address,
                balanceEther: formatEther(balance),
                minimumEther: formatEther(this.minBalance),
              },
              'ALERT relayer balance below the minimum: it takes no new work until funded',
            )
          }
        }
        key.funded = funded
      }),
    )
  }
}
