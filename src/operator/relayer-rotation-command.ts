// Relayer key rotation without downtime, the owner's `deploy` subcommands: authorize a new key on the contract, drain
// an old one (recorded in the service's database, so every instance stops giving it new anchors on its next monitor
// pass while its pending transactions finish), and revoke it on the contract once nothing it sent is still open.
import { type Address, createPublicClient, http, isAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { addRelayer, removeRelayer } from '../chain/deploy-document-anchors.ts'
import { databaseUrlOf, processEnv } from '../config/load-config.ts'
import { type Database, openDatabase } from '../db/database.ts'
import { drainState, startDrain, stopDrain } from '../relayer/relayer-drains.ts'
import {
  type OwnerCommandIo,
  ownerClients,
  parseOwnerOptions,
  readOwnerKey,
  reportFailure,
  rpcUrl,
  UsageError,
} from './owner-key.ts'

const SUBCOMMANDS = ['authorize', 'drain', 'undrain', 'revoke'] as const
type Subcommand = (typeof SUBCOMMANDS)[number]

/**
 * Longer than the service's monitor interval (RELAY_MONITOR_INTERVAL_MS, 5 s by default), within which every
 * instance stops handing the key new anchors: a relay that took the key just before could still be reserving one.
 */
const DEFAULT_GRACE_SECONDS = 60

export const rotationUsage = `Relayer key rotation (the service keeps running):
  deploy authorize --rpc <url> --contract <address> --relayer <address> [--private-key-file <file>]
  deploy drain     --rpc <url> --relayer <address>
  deploy undrain   --rpc <url> --relayer <address>
  deploy revoke    --rpc <url> --contract <address> --relayer <address> [--private-key-file <file>]
                   [--grace-seconds <n>] [--force]

  authorize  lets the key anchor (owner key); add it to the service's keys afterwards
  drain      the service gives the key no new anchors; its pending transactions finish (undrain: takes work again)
  revoke     removes the key from the contract (owner key); refused while the key is not draining, drained for
             less than --grace-seconds (default ${DEFAULT_GRACE_SECONDS}), or has pending transactions, unless --force

drain, undrain and revoke reach the service's database through DATABASE_URL (PostgreSQL shared by its instances).
The chain id is the one the --rpc endpoint reports.`

export interface RotationIo extends OwnerCommandIo {
  /** The service's database; by default opened from DATABASE_URL. */
  openDatabase?: () => Promise<{ db: Database; close(): Promise<void> }>
}

export function isRotationSubcommand(word: string | undefined): word is Subcommand {
  return SUBCOMMANDS.includes(word as Subcommand)
}

interface RotationOptions {
  rpc: string
  relayer: Address
  contract: Address | undefined
  privateKeyFile: string | undefined
  graceSeconds: number
  force: boolean
}

export async function runRotationCommand(
  subcommand: Subcommand,
  argv: readonly string[],
  io: RotationIo,
): Promise<number> {
  const command = `deploy ${subcommand}`
  try {
    const options = parseOptions(subcommand, argv)
    if (subcommand === 'authorize') {
      const { publicClient, walletClient, contract } = await ownerSide(options, io)
      await addRelayer(walletClient, publicClient, { contract, relayer: options.relayer })
      io.stderr.write(`authorized relayer ${options.relayer}; add its key to the service's keys next\n`)
      return 0
    }
    const chainId = await createPublicClient({ transport: http(options.rpc) }).getChainId()
    return await withDatabase(io, async (db) => {
      if (subcommand === 'drain') {
        await startDrain(db, chainId, options.relayer)
        io.stderr.write(`relayer ${options.relayer} draining on chain ${chainId}: no new anchors once every instance `)
        io.stderr.write('has run its next monitor pass; revoke it when its pending transactions have finished\n')
        return 0
      }
      if (subcommand === 'undrain') {
        const was = await stopDrain(db, chainId, options.relayer)
        io.stderr.write(`relayer ${options.relayer} ${was ? 'takes work again' : 'was not draining'}\n`)
        return 0
      }
      const state = await drainState(db, chainId, options.relayer)
      const refusal = revokeRefusal(state, options.graceSeconds)
      if (refusal && !options.force) {
        io.stderr.write(`${command}: refused: ${refusal}; nothing was sent (--force revokes anyway)\n`)
        return 1
      }
      const { publicClient, walletClient, contract } = await ownerSide(options, io)
      await removeRelayer(walletClient, publicClient, { contract, relayer: options.relayer })
      if (refusal) io.stderr.write(`forced past: ${refusal}; its open transactions will fail\n`)
      io.stderr.write(`revoked relayer ${options.relayer}; its past anchors keep verifying\n`)
      return 0
    })
  } catch (error) {
    return reportFailure(command, rotationUsage, error, io)
  }
}

function revokeRefusal(
  state: { drainingForSeconds: number | undefined; pending: number },
  graceSeconds: number,
): string | undefined {
  if (state.drainingForSeconds === undefined) return 'the key is not draining (run deploy drain first)'
  if (state.pending > 0) return `the key still has ${state.pending} pending transaction(s)`
  if (state.drainingForSeconds < graceSeconds) {
    return `the drain began ${Math.floor(state.drainingForSeconds)} s ago, less than ${graceSeconds} s`
  }
  return undefined
}

async function ownerSide(options: RotationOptions, io: RotationIo) {
  const account = privateKeyToAccount(await readOwnerKey(options.privateKeyFile, io))
  // parseOptions required --contract for the owner's subcommands.
  return { ...ownerClients(options.rpc, account), contract: options.contract as Address }
}

async function withDatabase(io: RotationIo, work: (db: Database) => Promise<number>): Promise<number> {
  const open =
    io.openDatabase ??
    (() => {
      const url = databaseUrlOf(processEnv())
      // An embedded PGlite belongs to the one service process that has it open: rotation needs the shared PostgreSQL.
      if (!url) throw new UsageError('DATABASE_URL must name the service database (PostgreSQL)')
      return openDatabase({ url, poolSize: 1 })
    })
  const database = await open()
  try {
    return await work(database.db)
  } finally {
    await database.close()
  }
}

function parseOptions(subcommand: Subcommand, argv: readonly string[]): RotationOptions {
  const values = parseOwnerOptions(argv, OPTIONS)
  const rpc = rpcUrl(values.rpc)
  const relayer = values.relayer
  if (!relayer) throw new UsageError('--relayer is required')
  if (!isAddress(relayer)) throw new UsageError(`--relayer ${relayer} is not an address`)
  const contract = values.contract
  if (contract !== undefined && !isAddress(contract)) throw new UsageError(`--contract ${contract} is not an address`)
  const owned = subcommand === 'authorize' || subcommand === 'revoke'
  if (owned && contract === undefined) throw new UsageError('--contract is required')
  const graceSeconds = Number(values['grace-seconds'] ?? DEFAULT_GRACE_SECONDS)
  if (!Number.isSafeInteger(graceSeconds) || graceSeconds < 0) {
    throw new UsageError('--grace-seconds must be a whole number of seconds')
  }
  return {
    rpc,
    relayer,
    contract,
    privateKeyFile: values['private-key-file'],
    graceSeconds,
    force: values.force ?? false,
  }
}

const OPTIONS = {
  rpc: { type: 'string' },
  contract: { type: 'string' },
  relayer: { type: 'string' },
  'private-key-file': { type: 'string' },
  'grace-seconds': { type: 'string' },
  force: { type: 'boolean' },
} as const
