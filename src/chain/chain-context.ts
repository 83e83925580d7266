import type { Address } from 'viem'
import type { PrivateKeyAccount } from 'viem/accounts'
import type { ChainClient } from './chain-client.ts'

/** Everything the API needs to know about the chain it anchors on. */
export interface ChainContext {
  client: ChainClient
  chainId: number
  contractAddress: Address
  /** The accounts the service signs anchor transactions with. */
  relayers: PrivateKeyAccount[]
  /** A JSON-RPC URL verifiers may use themselves; never one that carries credentials. */
  publicRpcUrl: string | null
  /** Explorer link template containing `{txHash}`, or null. */
  explorerTxUrl: string | null
}
