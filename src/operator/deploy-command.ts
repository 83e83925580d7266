// The `deploy` command: deploys DocumentAnchors on any chain and authorizes relayers. Kept apart from its entry point
// (deploy.ts) so tests can run it in-process with their own streams.
import { type Address, isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { deployDocumentAnchors } from '../chain/deploy-document-anchors.ts'
import {
  type OwnerCommandIo,
  ownerClients,
  parseOwnerOptions,
  readOwnerKey,
  reportFailure,
  rpcUrl,
  UsageError,
} from './owner-key.ts'
import { isRotationSubcommand, type RotationIo, rotationUsage, runRotationCommand } from './relayer-rotation-command.ts'

export const deployUsage = `usage: deploy --rpc <url> [--private-key-file <file>] [--relayer <address>]... [--chain-id <id>]

Deploys DocumentAnchors with the deployer as its owner, authorizes every --relayer, and prints the contract address.

  --rpc <url>                JSON-RPC endpoint (http or https) of the target chain
  --private-key-file <file>  file holding the deployer's private key (32 bytes hex); "-" or omitted: read stdin
  --relayer <address>        address allowed to anchor; repeat for several
  --chain-id <id>            refuse to deploy unless the endpoint reports this chain id

The key is never accepted as an argument: arguments are visible to every user in the process list.

${rotationUsage}`

export type DeployCommandIo = OwnerCommandIo & RotationIo

/** Runs the command; resolves with the process exit code (0 done, 1 failed, 2 bad usage). */
export async function runDeployCommand(argv: readonly string[], io: DeployCommandIo): Promise<number> {
  if (isRotationSubcommand(argv[0])) return runRotationCommand(argv[0], argv.slice(1), io)
  try {
    const options = parseOptions(argv)
    if (options === 'help') {
      io.stdout.write(`${deployUsage}\n`)
      return 0
    }
    const account = privateKeyToAccount(await readOwnerKey(options.privateKeyFile, io))
    const { publicClient, walletClient } = ownerClients(options.rpc, account)

    const chainId = await publicClient.getChainId()
    if (options.chainId !== undefined && chainId !== options.chainId) {
      throw new Error(`the endpoint reports chain id ${chainId}, not ${options.chainId}; nothing was deployed`)
    }
    io.stderr.write(`deploying DocumentAnchors on chain ${chainId} from ${account.address} (owner)\n`)
    const contract = await deployDocumentAnchors(walletClient, publicClient, { relayers: options.relayers })
    for (const relayer of options.relayers) io.stderr.write(`authorized relayer ${relayer}\n`)
    io.stdout.write(`${contract}\n`)
    return 0
  } catch (error) {
    return reportFailure('deploy', deployUsage, error, io)
  }
}

interface DeployOptions {
  rpc: string
  privateKeyFile: string | undefined
  relayers: Address[]
  chainId: number | undefined
}

function parseOptions(argv: readonly string[]): DeployOptions | 'help' {
  const values = parseOwnerOptions(argv, OPTIONS)
  if (values.help) return 'help'
  const rpc = rpcUrl(values.rpc)
  const relayers = values.relayer ?? []
  for (const relayer of relayers) {
    if (!isAddress(relayer)) throw new UsageError(`--relayer ${relayer} is not an address`)
  }
  let chainId: number | undefined
  if (values['chain-id'] !== undefined) {
    chainId = Number(values['chain-id'])
    if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new UsageError('--chain-id must be a positive integer')
  }
  return { rpc, privateKeyFile: values['private-key-file'], relayers: relayers as Address[], chainId }
}

const OPTIONS = {
  rpc: { type: 'string' },
  'private-key-file': { type: 'string' },
  relayer: { type: 'string', multiple: true },
  'chain-id': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const
