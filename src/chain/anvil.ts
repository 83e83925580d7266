// Runs anvil (the development Ethereum node shipped in @foundry-rs/anvil) as a child process of this one.
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFile, readFile, stat } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { dirname, join } from 'node:path'
import { createInterface } from 'node:readline'

export interface StartAnvilOptions {
  /**
   * Where the chain is kept between runs (`--state`): loaded at start when the file exists, written on exit and every
   * `stateIntervalSeconds` while running. Without it the chain lives in memory only.
   */
  stateFile?: string
  /** Whole seconds between state dumps. @default 1 */
  stateIntervalSeconds?: number
  /** @default a free loopback port */
  port?: number
  /** Seconds between blocks (interval mining) instead of one block per transaction. */
  blockTime?: number
  /** Mine only on `evm_mine` / `anvil_mine`. */
  noMining?: boolean
  /**
   * Keep only recent states and transactions in memory: anvil slows down as blocks pile up (to a third of its pace
   * after 5,000 transactions). For load runs that never read old blocks; receipts older than 256 blocks are gone.
   */
  recentOnly?: boolean
  /** @default 31337 */
  chainId?: number
  /** Receives every line anvil prints (stdout and stderr). */
  log?: (line: string) => void
  /** @default 10_000 */
  readyTimeoutMs?: number
  /** How long `stop()` waits after SIGTERM (anvil writes its state then) before it sends SIGKILL. @default 10_000 */
  stopTimeoutMs?: number
}

export interface AnvilInstance {
  rpcUrl: string
  port: number
  pid: number
  /** Idempotent; resolves once the process has exited and, with a state file, written it. */
  stop(): Promise<void>
}

const HOST = '127.0.0.1'
const DEFAULT_CHAIN_ID = 31337
const KEPT_OUTPUT_LINES = 20
const READY_POLL_MS = 10

const platformPackages: Record<string, string | undefined> = {
  'linux-x64': '@foundry-rs/anvil-linux-amd64',
  'linux-arm64': '@foundry-rs/anvil-linux-arm64',
  'darwin-x64': '@foundry-rs/anvil-darwin-amd64',
  'darwin-arm64': '@foundry-rs/anvil-darwin-arm64',
  'win32-x64': '@foundry-rs/anvil-win32-amd64',
}

/**
 * The anvil binary itself, from the platform package @foundry-rs/anvil installs. Never `npx anvil`: killing npx's
 * wrapper leaves anvil running, and a leftover anvil then answers the next readiness check with an old chain.
 */
export function resolveAnvilBinary(platform: string = process.platform, arch: string = process.arch): string {
  const pkg = platformPackages[`${platform}-${arch}`]
  if (!pkg) throw new Error(`anvil has no binary for ${platform}-${arch}`)
  const require = createRequire(import.meta.url)
  let manifest: string
  try {
    manifest = require.resolve(`${pkg}/package.json`)
  } catch (cause) {
    throw new Error(`${pkg} is not installed (it is an optional dependency of @foundry-rs/anvil)`, { cause })
  }
  return join(dirname(manifest), 'bin', platform === 'win32' ? 'anvil.exe' : 'anvil')
}

export async function startAnvil(options: StartAnvilOptions = {}): Promise<AnvilInstance> {
  const chainId = options.chainId ?? DEFAULT_CHAIN_ID
  const stateInterval = options.stateIntervalSeconds ?? 1
  if (!Number.isSafeInteger(stateInterval) || stateInterval < 1) {
    throw new Error(`stateIntervalSeconds must be a whole number of seconds, at least 1, not ${stateInterval}`)
  }
  if (options.stateFile) await recoverStateFile(options.stateFile, options.log)

  // Port 0 lets anvil bind a free port itself, which it then prints: unlike probing for a free port and passing it
  // on, no other process can take the port in between.
  const args = ['--host', HOST, '--port', String(options.port ?? 0), '--chain-id', String(chainId), '--color', 'never']
  if (options.stateFile) {
    // anvil writes --state on a clean exit and otherwise only every 60 s, so a crash (SIGKILL, power loss) would lose
    // up to a minute of anchors the database already records as mined. Dumping every second bounds that loss.
    args.push('--state', options.stateFile, '--state-interval', String(stateInterval))
  }
  if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime))
  if (options.noMining) args.push('--no-mining')
  if (options.recentOnly) args.push('--prune-history', '--transaction-block-keeper', '256')

  const binary = resolveAnvilBinary()
  // Same process group as this one (not detached): a Ctrl-C in the terminal reaches anvil too, so it never outlives us.
  const child = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] })
  const output: string[] = []
  let listeningPort: number | undefined
  const onLine = (line: string) => {
    output.push(line)
    if (output.length > KEPT_OUTPUT_LINES) output.shift()
    // Printed once the socket is bound, so it also proves that whoever answers on the port is this anvil.
    const listening = /^Listening on .+:(\d+)$/.exec(line.trim())
    if (listening) listeningPort = Number(listening[1])
    options.log?.(line)
  }
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on('line', onLine)

  let exitStatus: string | undefined
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitStatus = signal ?? `code ${code}`
      resolve()
    }),
  )
  let spawnError: Error | undefined
  child.once('error', (error) => {
    spawnError = error
  })

  // A process 'exit' handler may only run synchronous code, and a signal is all it needs: SIGTERM still lets anvil
  // write its state. If this process is SIGKILLed no handler runs at all, and anvil outlives it.
  const killOnExit = () => child.kill('SIGTERM')
  process.on('exit', killOnExit)
  void exited.then(() => process.off('exit', killOnExit))

  let stopping: Promise<void> | undefined
  const stop = () => {
    stopping ??= stopChild(child, exited, options.stopTimeoutMs ?? 10_000)
    return stopping
  }

  const timeoutMs = options.readyTimeoutMs ?? 10_000
  const deadline = Date.now() + timeoutMs
  let failure: string | undefined
  for (;;) {
    if (spawnError) failure = `could not run ${binary}: ${spawnError.message}`
    else if (exitStatus !== undefined) failure = `anvil exited (${exitStatus})`
    else if (listeningPort !== undefined) {
      const answered = await readChainId(`http://${HOST}:${listeningPort}`)
      if (answered === chainId) break
      if (answered !== undefined) failure = `anvil answered with chain id ${answered}, expected ${chainId}`
    }
    if (failure === undefined && Date.now() > deadline) failure = `no answer to eth_chainId within ${timeoutMs} ms`
    if (failure !== undefined) {
      await stop()
      const detail = output.length > 0 ? `; anvil's last output:\n${output.join('\n')}` : ''
      throw new Error(`anvil did not start: ${failure}${detail}`)
    }
    await new Promise((resolve) => setTimeout(resolve, READY_POLL_MS))
  }

  const port = listeningPort as number
  return { rpcUrl: `http://${HOST}:${port}`, port, pid: child.pid as number, stop }
}

async function stopChild(child: ChildProcess, exited: Promise<void>, timeoutMs: number): Promise<void> {
  // No pid: the binary never ran, so there is no exit to wait for.
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return
  child.kill('SIGTERM')
  let timer: NodeJS.Timeout | undefined
  const timedOut = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), timeoutMs)
  })
  const killed = await Promise.race([exited.then(() => false), timedOut])
  clearTimeout(timer)
  if (killed) {
    child.kill('SIGKILL')
    await exited
  }
}

async function readChainId(rpcUrl: string): Promise<number | undefined> {
  try {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'eth_chainId', params: [] }),
      signal: AbortSignal.timeout(1_000),
    })
    const body = (await response.json()) as { result?: string }
    return body.result === undefined ? undefined : Number(body.result)
  } catch {
    return undefined
  }
}

/**
 * anvil rewrites its state file in place (truncate, then write), so a crash in the middle of a dump leaves a file it
 * refuses to load. Keep the last good file as `<file>.bak` at every start, and fall back to it when the file is
 * damaged; fail loudly rather than start an empty chain that would silently orphan every recorded anchor.
 */
async function recoverStateFile(stateFile: string, log: ((line: string) => void) | undefined): Promise<void> {
  const backup = `${stateFile}.bak`
  if (!(await exists(stateFile))) return
  if (await isJsonFile(stateFile)) {
    await copyFile(stateFile, backup)
    return
  }
  if (await isJsonFile(backup)) {
    log?.(`anvil state file ${stateFile} is damaged; restoring ${backup}`)
    await copyFile(backup, stateFile)
    return
  }
  throw new Error(`anvil state file ${stateFile} is damaged and there is no usable ${backup}`)
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

async function isJsonFile(path: string): Promise<boolean> {
  try {
    JSON.parse(await readFile(path, 'utf8'))
    return true
  } catch {
    return false
  }
}
