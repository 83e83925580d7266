// A fresh anvil chain for one test file, with the contract deployed and clients polling fast enough for a local node.
import {
  type Address,
  type Chain,
  createPublicClient,
  createWalletClient,
  type HttpTransport,
  http,
  type PrivateKeyAccount,
  type PublicClient,
  type WalletClient,
} from 'viem'
import { anvil as anvilChain } from 'viem/chains'
import { type AnvilInstance, type StartAnvilOptions, startAnvil } from '../../../src/chain/anvil.ts'
import { anvilAccount } from '../../../src/chain/anvil-accounts.ts'
import { createChainClient } from '../../../src/chain/chain-client.ts'
import type { ChainContext } from '../../../src/chain/chain-context.ts'
import { deployDocumentAnchors } from '../../../src/chain/deploy-document-anchors.ts'

/** viem polls every 4 s by default; anvil answers in about a millisecond. */
export const LOCAL_POLLING_INTERVAL_MS = 20

export interface StartTestChainOptions {
  /** Deploy DocumentAnchors with account 0 as owner and relayer. @default true */
  deploy?: boolean
  /** More relayers to authorize at deploy, besides account 0. */
  relayers?: readonly Address[]
  anvil?: StartAnvilOptions
  /** Another node implementation instead of anvil (test/helpers/other-nodes.ts), already started. */
  node?: () => Promise<AnvilInstance>
}

export type TestWalletClient = WalletClient<HttpTransport, Chain, PrivateKeyAccount>

export interface TestChain {
  /** The node: anvil, or another implementation shaped as one. */
  anvil: AnvilInstance
  rpcUrl: string
  chain: Chain
  publicClient: PublicClient
  /** Account i of anvil's default mnemonic (see src/chain/anvil-accounts.ts). */
  account(index: number): PrivateKeyAccount
  /** A wallet client signing as account i (default 0, the contract's owner and first relayer). */
  walletClient(index?: number): TestWalletClient
  /** The deployed DocumentAnchors; throws when started with `deploy: false`. */
  contract: Address
  stop(): Promise<void>
}

export async function startTestChain(options: StartTestChainOptions = {}): Promise<TestChain> {
  const anvil = options.node ? await options.node() : await startAnvil(options.anvil)
  try {
    const chain: Chain = {
      ...anvilChain,
      id: options.anvil?.chainId ?? anvilChain.id,
      rpcUrls: { default: { http: [anvil.rpcUrl] } },
    }
    const transport = http(anvil.rpcUrl)
    const publicClient: PublicClient = createPublicClient({
      chain,
      transport,
      pollingInterval: LOCAL_POLLING_INTERVAL_MS,
    })
    const walletClients = new Map<number, TestWalletClient>()
    const walletClient = (index = 0): TestWalletClient => {
      let client = walletClients.get(index)
      if (!client) {
        client = createWalletClient({
          account: anvilAccount(index),
          chain,
          transport,
          pollingInterval: LOCAL_POLLING_INTERVAL_MS,
        })
        walletClients.set(index, client)
      }
      return client
    }

    let contract: Address | undefined
    if (options.deploy ?? true) {
      const relayers = [anvilAccount(0).address, ...(options.relayers ?? [])]
      contract = await deployDocumentAnchors(walletClient(0), publicClient, { relayers })
    }

    return {
      anvil,
      rpcUrl: anvil.rpcUrl,
      chain,
      publicClient: publicClient,
      account: anvilAccount,
      walletClient,
      get contract(): Address {
        if (!contract) throw new Error('this test chain was started without deploying DocumentAnchors')
        return contract
      },
      stop: anvil.stop,
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}

/** The app's view of a test chain: account 0 relays, its RPC URL is the public one, polling is local-fast. */
export function testChainContext(testChain: TestChain, overrides: Partial<ChainContext> = {}): ChainContext {
  return {
    client: createChainClient({
      rpcUrls: [testChain.rpcUrl],
      chainId: testChain.chain.id,
      pollingIntervalMs: LOCAL_POLLING_INTERVAL_MS,
    }),
    chainId: testChain.chain.id,
    contractAddress: testChain.contract,
    relayers: [testChain.account(0)],
    publicRpcUrl: testChain.rpcUrl,
    explorerTxUrl: null,
    ...overrides,
  }
}
