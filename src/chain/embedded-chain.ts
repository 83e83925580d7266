// The development chain the service runs when no RPC_URL is configured: anvil with its state under the data directory,
// DocumentAnchors deployed on the first start and found again at the same address on every later one.
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { type Address, createPublicClient, createWalletClient, type Hex, http, type PublicClient } from 'viem'
import { type AnvilInstance, startAnvil } from './anvil.ts'
import { anvilAccount, anvilPrivateKey } from './anvil-accounts.ts'
import { deployDocumentAnchors } from './deploy-document-anchors.ts'

export interface StartEmbeddedChainOptions {
  /** The service's data directory; the chain keeps its files in `<dataDir>/chain`. */
  dataDir: string
  /** How many relayer accounts to authorize at the first deploy (anvil accounts 1..n; account 0 owns). @default 1 */
  relayerCount?: number
  /** Receives anvil's output lines. */
  log?: (line: string) => void
  /** Loopback port anvil listens on (EMBEDDED_CHAIN_PORT); 0, a free one. */
  port?: number
}

export interface EmbeddedChain {
  rpcUrl: string
  chainId: number
  contractAddress: Address
  /** anvil's account 0, which deployed the contract. */
  owner: Address
  /** Keys the relayer signs with, authorized on the contract. Public development keys: never use them elsewhere. */
  relayerPrivateKeys: Hex[]
  /** Whether this start deployed the contract (the first one) rather than finding it. */
  deployed: boolean
  anvil: AnvilInstance
  stop(): Promise<void>
}

/** What the first start records so that later ones find the same contract. */
interface Deployment {
  chainId: number
  contractAddress: Address
  owner: Address
  relayers: Address[]
}

const CHAIN_ID = 31337
const LOCAL_POLLING_INTERVAL_MS = 20

export async function startEmbeddedChain(options: StartEmbeddedChainOptions): Promise<EmbeddedChain> {
  const dir = join(options.dataDir, 'chain')
  const deploymentFile = join(dir, 'deployment.json')
  await mkdir(dir, { recursive: true })
  const relayerIndexes = Array.from({ length: options.relayerCount ?? 1 }, (_, i) => i + 1)
  const relayerPrivateKeys = relayerIndexes.map(anvilPrivateKey)
  const owner = anvilAccount(0)

  const anvil = await startAnvil({
    stateFile: join(dir, 'anvil-state.json'),
    chainId: CHAIN_ID,
    log: options.log,
    port: options.port,
  })
  try {
    const transport = http(anvil.rpcUrl)
    const publicClient: PublicClient = createPublicClient({ transport, pollingInterval: LOCAL_POLLING_INTERVAL_MS })
    const recorded = await readDeployment(deploymentFile)
    let contractAddress: Address
    if (recorded) {
      const code = await publicClient.getCode({ address: recorded.contractAddress })
      if (recorded.chainId !== CHAIN_ID || code === undefined || code === '0x') {
        throw new Error(
          `the embedded chain has no contract at ${recorded.contractAddress} although ${deploymentFile} records one: ` +
            `its state was lost, and with it every anchor. Delete ${options.dataDir} to start afresh.`,
        )
      }
      contractAddress = recorded.contractAddress
    } else {
      const walletClient = createWalletClient({
        account: owner,
        transport,
        pollingInterval: LOCAL_POLLING_INTERVAL_MS,
      })
      const relayers = relayerIndexes.map((index) => anvilAccount(index).address)
      contractAddress = await deployDocumentAnchors(walletClient, publicClient, { relayers })
      await writeDeployment(deploymentFile, {
        chainId: CHAIN_ID,
        contractAddress,
        owner: owner.address,
        relayers,
      })
    }
    return {
      rpcUrl: anvil.rpcUrl,
      chainId: CHAIN_ID,
      contractAddress,
      owner: owner.address,
      relayerPrivateKeys,
      deployed: !recorded,
      anvil,
      stop: anvil.stop,
    }
  } catch (error) {
    await anvil.stop()
    throw error
  }
}

async function readDeployment(file: string): Promise<Deployment | undefined> {
  let text: string
  try {
    text = await readFile(file, 'utf8')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  return JSON.parse(text) as Deployment
}

/** Written to a temporary file and renamed over the old one, so a crash never leaves half a record. */
async function writeDeployment(file: string, deployment: Deployment): Promise<void> {
  await writeFile(`${file}.tmp`, `${JSON.stringify(deployment, null, 2)}\n`)
  await rename(`${file}.tmp`, file)
}
