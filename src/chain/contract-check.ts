// Whether the node still serves the configured contract: the chain id it was started with, and the contract's code at
// its address. A node restarted with an empty chain answers every call to that address with success and no event.
import { DOCUMENT_ANCHORED_TOPIC } from '@docanchor/client'
import type { Address } from 'viem'
import type { ChainClient } from './chain-client.ts'

export type ContractState =
  | 'ok'
  /** The node serves another chain than the configured one. */
  | 'wrong-chain'
  /** No code at the address, or code that cannot emit DocumentAnchored. */
  | 'missing'
  /** The node could not be asked. */
  | 'unknown'

async function checkContract(client: ChainClient, chainId: number, address: Address): Promise<ContractState> {
  let answers: unknown[]
  try {
    answers = await client.requestBatch([
      { method: 'eth_chainId', params: [] },
      { method: 'eth_getCode', params: [address, 'latest'] },
    ])
  } catch {
    return 'unknown'
  }
  const [servedChain, code] = answers
  if (typeof servedChain !== 'string' || Number(servedChain) !== chainId) return 'wrong-chain'
  // The event's topic is a PUSH32 constant of the contract's code: any other code at the address lacks it.
  const ours = typeof code === 'string' && code.toLowerCase().includes(DOCUMENT_ANCHORED_TOPIC.slice(2).toLowerCase())
  return ours ? 'ok' : 'missing'
}

/**
 * The relayer's view of the contract: known missing (or on the wrong chain) stops new anchors. Checked by the relay
 * monitor on every pass, and at once when an anchor transaction was mined without its event.
 */
export class ContractWatch {
  private state: ContractState = 'unknown'
  private checking: Promise<ContractState> | undefined

  constructor(
    private readonly client: ChainClient,
    private readonly chainId: number,
    private readonly address: Address,
    private readonly onChange: (state: ContractState, was: ContractState) => void = () => {},
  ) {}

  /** True only when the last check showed the contract absent; an unreachable node is not evidence. */
  get missing(): boolean {
    return this.state === 'missing' || this.state === 'wrong-chain'
  }

  check(): Promise<ContractState> {
    this.checking ??= checkContract(this.client, this.chainId, this.address)
      .then((state) => {
        if (state !== 'unknown' && state !== this.state) {
          const was = this.state
          this.state = state
          this.onChange(state, was)
        }
        return state
      })
      .finally(() => {
        this.checking = undefined
      })
    return this.checking
  }

  /** An anchor was mined without its event: check now rather than at the next pass. */
  suspect(): void {
    void this.check()
  }
}
