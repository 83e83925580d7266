// What the owner's commands (`deploy` and its relayer rotation) share: the owner key, read from a file or stdin and
// never from an argument (arguments are visible to every user in the process list), and their usage errors.
import { readFile } from 'node:fs/promises'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { type Account, BaseError, createPublicClient, createWalletClient, type Hex, http } from 'viem'

export interface OwnerCommandIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

/** Bad arguments: the command prints its usage and exits 2. */
export class UsageError extends Error {}

/** `file` undefined or "-": stdin. */
export async function readOwnerKey(file: string | undefined, io: OwnerCommandIo): Promise<Hex> {
  let text: string
  if (file === undefined || file === '-') {
    if (io.stdin.isTTY) io.stderr.write("owner's private key (then Enter and Ctrl-D): ")
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

/** An http(s) JSON-RPC URL, or a UsageError. */
export function rpcUrl(value: string | undefined): string {
  if (!value) throw new UsageError('--rpc is required')
  let url: URL
  try {
    url = new URL(value)
  } catch {
    throw new UsageError('--rpc must be an http or https URL')
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError('--rpc must be an http or https URL')
  return value
}

/** The command's options (no positionals); a parse error is a UsageError, pointing `--private-key` at the file. */
export function parseOwnerOptions<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: T,
) {
  try {
    return parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values
  } catch (error) {
    const hint = /private-key'/.test((error as Error).message) ? ' (use --private-key-file or stdin)' : ''
    throw new UsageError(`${(error as Error).message}${hint}`)
  }
}

/** While a command waits for receipts: often enough for a local node, gentle enough for a hosted endpoint. */
const RECEIPT_POLLING_INTERVAL_MS = 250

export function ownerClients(rpc: string, account: Account) {
  const transport = http(rpc)
  return {
    publicClient: createPublicClient({ transport, pollingInterval: RECEIPT_POLLING_INTERVAL_MS }),
    walletClient: createWalletClient({ account, transport, pollingInterval: RECEIPT_POLLING_INTERVAL_MS }),
  }
}

/** Prints the failure; resolves with the exit code (2 bad usage, 1 failed). */
export function reportFailure(command: string, usage: string, error: unknown, io: OwnerCommandIo): number {
  if (error instanceof UsageError) {
    io.stderr.write(`${command}: ${error.message}\n\n${usage}\n`)
    return 2
  }
  // shortMessage leaves out viem's details, which name the RPC URL (hosted endpoints often embed an API key in it).
  const message = error instanceof BaseError ? error.shortMessage : (error as Error).message
  io.stderr.write(`${command} failed: ${message}\n`)
  return 1
}
