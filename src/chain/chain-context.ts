import type { Address } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { SignerHealth } from '../pkcs11/signer-health.ts'
import type { ChainClient } from './chain-client.ts'

/** Everything the API needs to know about the chain it anchors on. */
export interface ChainContext {
  client: ChainClient
  chainId: number
  contractAddress: Address
  /** The accounts the service signs anchor transactions with. */
  relayers: LocalAccount[]
  /** Set when the keys are on a token: which of them can sign now. */
  signerHealth?: SignerHealth
  /** Ends what the signers hold open (the token processes). */
  closeSigners?: () => void
  /**
   * A JSON-RPC URL verifiers may use themselves; never one that carries credentials. Null with an embedded chain
   * (`embeddedRpcUrl`): the service then publishes its own read-only route to it.
   */
  publicRpcUrl: string | null
  /**
   * The embedded anvil's own URL: it answers every method (writes, `anvil_*`), so it is never published; the service's
   * read-only route (`/rpc`) forwards reads to it.
   */
  embeddedRpcUrl?: string
  /** Explorer link template containing `{txHash}`, or null. */
  explorerTxUrl: string | null
}
