// One key on a PKCS#11 token, driven through a child process of its own (pkcs11-token-process.ts). A child process
// rather than a worker thread: a worker blocked inside a native call cannot be stopped, a process can be killed. Every
// call has a timeout; a key whose call fails or times out is reported down, and a probe reopens it in the background
// until it signs again, then reports it up.
import { type ChildProcess, fork } from 'node:child_process'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import type { TokenPublicKey, TokenReply, TokenRequest } from './pkcs11-token-protocol.ts'

/**
 * The token process: in the service's build (scripts/precompile.ts) a bundle of its own beside this chunk, plain
 * JavaScript; from the sources, its TypeScript through tsx, a development dependency. `import.meta.filename` is the
 * chunk's own path in the build (the build rewrites only `import.meta.url`, to the source's).
 */
const TOKEN_PROCESS = import.meta.filename?.endsWith('.js')
  ? { path: join(import.meta.dirname, 'pkcs11-token-process.js'), execArgv: [] }
  : { path: fileURLToPath(new URL('./pkcs11-token-process.ts', import.meta.url)), execArgv: ['--import', 'tsx'] }
/** Starting the token process (Node and its loader) comes on top of the open call's own timeout. */
const PROCESS_START_MS = 20_000
/** Any 32 bytes do for a probe: the signature is thrown away. */
const PROBE_HASH = `${'00'.repeat(31)}01`

export interface TokenKeySettings {
  module: string
  tokenLabel: string
  pin: string
  keyLabel: string
  /** Longest wait for one token call. */
  callTimeoutMs: number
  /** Pause between probes of a key that is down. */
  probeIntervalMs: number
}

export interface TokenKeyEvents {
  /** The key was taken out of rotation (`up` false) or came back. `reason` never carries the PIN. */
  onHealth(up: boolean, reason: string): void
}

/** A token call that failed; `variable` names the configuration variable at fault when there is one. */
export class TokenCallError extends Error {
  override name = 'TokenCallError'
  constructor(
    message: string,
    readonly variable?: string,
  ) {
    super(message)
  }
}

export class Pkcs11Key {
  private child: ChildProcess | undefined
  /** Calls go to the child one at a time: it answers in order, and a token session is not shared between calls. */
  private queue: Promise<unknown> = Promise.resolve()
  private probeTimer: NodeJS.Timeout | undefined
  private closed = false
  up = true

  private constructor(
    private readonly settings: TokenKeySettings,
    private readonly events: TokenKeyEvents,
  ) {}

  /** Opens the key; resolves with it and its public key as the token holds it, or throws TokenCallError. */
  static async open(
    settings: TokenKeySettings,
    events: TokenKeyEvents,
  ): Promise<{ key: Pkcs11Key; publicKey: TokenPublicKey }> {
    const key = new Pkcs11Key(settings, events)
    try {
      const opened = await key.call({ type: 'open', ...key.openRequest() })
      if (opened.type !== 'opened') throw new TokenCallError('the token did not answer the open request')
      return { key, publicKey: opened.publicKey }
    } catch (error) {
      key.close()
      throw error
    }
  }

  /**
   * The signature over `hash` (SHA-256 or Keccak-256, 32 bytes, hex without 0x): r‖s of CKM_ECDSA for an EC key, the
   * PKCS#1 v1.5 signature of its SHA-256 DigestInfo for an RSA key. A failure takes the key down until a probe succeeds.
   */
  async sign(hash: string): Promise<string> {
    if (!this.up) throw new TokenCallError('the token key is out of rotation')
    try {
      return await this.signOnce(hash)
    } catch (error) {
      this.takeDown(error instanceof Error ? error.message : String(error))
      throw error
    }
  }

  close(): void {
    this.closed = true
    clearTimeout(this.probeTimer)
    this.stopChild()
  }

  private async signOnce(hash: string): Promise<string> {
    if (!this.child) await this.call({ type: 'open', ...this.openRequest() })
    const signed = await this.call({ type: 'sign', hash })
    if (signed.type !== 'signed') throw new TokenCallError('the token did not answer the sign request')
    return signed.signature
  }

  private openRequest() {
    const { module, tokenLabel, pin, keyLabel } = this.settings
    return { module, tokenLabel, pin, keyLabel }
  }

  private takeDown(reason: string): void {
    if (this.up) {
      this.up = false
      this.events.onHealth(false, reason)
    }
    this.stopChild()
    this.scheduleProbe()
  }

  private scheduleProbe(): void {
    if (this.closed || this.probeTimer) return
    this.probeTimer = setTimeout(() => {
      this.probeTimer = undefined
      this.signOnce(PROBE_HASH).then(
        () => {
          if (this.closed) return
          this.up = true
          this.events.onHealth(true, 'the token key signs again')
        },
        () => {
          this.stopChild()
          this.scheduleProbe()
        },
      )
    }, this.settings.probeIntervalMs)
    this.probeTimer.unref()
  }

  private stopChild(): void {
    const child = this.child
    this.child = undefined
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }

  private call(request: TokenRequest): Promise<Exclude<TokenReply, { type: 'failed' }>> {
    const result = this.queue.then(() => this.send(request))
    this.queue = result.catch(() => undefined)
    return result
  }

  private send(request: TokenRequest): Promise<Exclude<TokenReply, { type: 'failed' }>> {
    if (this.closed) return Promise.reject(new TokenCallError('the token key is closed'))
    if (!this.child) this.child = this.spawn()
    const child = this.child
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer)
        child.off('message', onMessage)
        child.off('exit', onExit)
      }
      const onMessage = (reply: TokenReply) => {
        cleanup()
        if (reply.type === 'failed') reject(new TokenCallError(reply.message, reply.variable))
        else resolve(reply)
      }
      const onExit = (code: number | null, signal: string | null) => {
        cleanup()
        if (this.child === child) this.child = undefined
        reject(new TokenCallError(`the token process ended (${signal ?? `exit ${code}`})`))
      }
      const timeoutMs = this.settings.callTimeoutMs + (request.type === 'open' ? PROCESS_START_MS : 0)
      const timer = setTimeout(() => {
        cleanup()
        // The native call may never return: kill the process that is stuck in it.
        if (this.child === child) this.stopChild()
        else child.kill('SIGKILL')
        reject(new TokenCallError(`the token did not answer ${request.type} within ${timeoutMs} ms`))
      }, timeoutMs)
      child.on('message', onMessage)
      child.on('exit', onExit)
      child.send(request)
    })
  }

  private spawn(): ChildProcess {
    // The token library reads its own environment (SOFTHSM2_CONF and the like), so the child inherits it.
    const child = fork(TOKEN_PROCESS.path, {
      execArgv: TOKEN_PROCESS.execArgv,
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
    })
    child.on('error', () => {})
    return child
  }
}
