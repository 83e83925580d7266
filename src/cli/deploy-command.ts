// The `deploy` command: deploys DocumentAnchors on any chain and authorizes relayers. Kept apart from its entry point
// (deploy.ts) so tests can run it in-process with their own streams.
import { readFile } from 'node:fs/promises'
import { parseArgs } from 'node:util'
import { type Address, BaseError, createPublicClient, createWalletClient, type Hex, http, isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { deployDocumentAnchors } from '../chain/deploy-document-anchors.ts'

export const deployUsage = `usage: deploy --rpc <url> [--private-key-file <file>] [--relayer <address>]... [--chain-id <id>]

Deploys DocumentAnchors with the deployer as its owner, authorizes every --relayer, and prints the contract address.

  --rpc <url>                JSON-RPC endpoint (http or https) of the target chain
  --private-key-file <file>  file holding the deployer's private key (32 bytes hex); "-" or omitted: read stdin
  --relayer <address>        address allowed to anchor; repeat for several
  --chain-id <id>            refuse to deploy unless the endpoint reports this chain id

The key is never accepted as an argument: arguments are visible to every user in the process list.`

export interface DeployCommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/** While a deploy waits for receipts: often enough for a local node, gentle enough for a hosted endpoint. */
const RECEIPT_POLLING_INTERVAL_MS = 250

class UsageError extends Error {}

/** Runs the command; resolves with the process exit code (0 done, 1 failed, 2 bad usage). */
export async function runDeployCommand(argv: readonly string[], io: DeployCommandIo): Promise<number> {
  try {
    const options = parseOptions(argv)
    if (options === 'help') {
      io.stdout.write(`${deployUsage}\n`)
      return 0
    }
    const account = privateKeyToAccount(await readPrivateKey(options.privateKeyFile, io))
    const transport = http(options.rpc)
    const publicClient = createPublicClient({ transport, pollingInterval: RECEIPT_POLLING_INTERVAL_MS })
    const walletClient = createWalletClient({ account, transport, pollingInterval: RECEIPT_POLLING_INTERVAL_MS })

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
    if (error instanceof UsageError) {
      io.stderr.write(`deploy: ${error.message}\n\n${deployUsage}\n`)
      return 2
    }
    // shortMessage leaves out viem's details, which name the RPC URL (hosted endpoints often embed an API key in it).
    const message = error instanceof BaseError ? error.shortMessage : (error as Error).message
    io.stderr.write(`deploy failed: ${message}\n`)
    return 1
  }
}

interface DeployOptions {
  rpc: string
  privateKeyFile: string | undefined
  relayers: Address[]
  chainId: number | undefined
}

function parseOptions(argv: readonly string[]): DeployOptions | 'help' {
  let values: ReturnType<typeof parse>['values']
  try {
    values = parse(argv).values
  } catch (error) {
    const hint = /private-key'/.test((error as Error).message) ? ' (use --private-key-file or stdin)' : ''
    throw new UsageError(`${(error as Error).message}${hint}`)
  }
  if (values.help) return 'help'
  if (!values.rpc) throw new UsageError('--rpc is required')
  let url: URL
  try {
    url = new URL(values.rpc)
  } catch {
    throw new UsageError('--rpc must be an http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--rpc must be an http or https URL')
  const relayers = values.relayer ?? []
  for (const relayer of relayers) {
    if (!isAddress(relayer)) throw new UsageError(`--relayer ${relayer} is not an address`)
  }
  let chainId: number | undefined
  if (values['chain-id'] !== undefined) {
    chainId = Number(values['chain-id'])
    if (!Number.isSafeInteger(chainId) || chainId <= 0) throw new UsageError('--chain-id must be a positive integer')
  }
  return { rpc: values.rpc, privateKeyFile: values['private-key-file'], relayers: relayers as Address[], chainId }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      rpc: { type: 'string' },
      'private-key-file': { type: 'string' },
      relayer: { type: 'string', multiple: true },
      'chain-id': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  })
}

async function readPrivateKey(file: string | undefined, io: DeployCommandIo): Promise<Hex> {
  let text: string
  if (file === undefined || file === '-') {
    if (io.stdin.isTTY) io.stderr.write("deployer's private key (then Enter and Ctrl-D): ")
    const chunks: Buffer[] = []
    for await (const chunk of io.stdin) chunks.push(Buffer.from(chunk))
    text = Buffer.concat(chunks).toString('utf8')
  } else {
    try {
      text = await readFile(file, 'utf8')
    } catch (error) {
      throw new UsageError(`cannot read --private-key-file ${file}: ${(error as NodeJS.ErrnoException).code}`)
    }
  }
  const key = text.trim().replace(/^0x/i, '')
  // The message never echoes what was read: it may be a slightly mistyped key.
  if (!/^[0-9a-fA-F]{64}$/.test(key)) throw new UsageError('the private key must be 32 bytes of hex (0x optional)')
  return `0x${key}`
}
