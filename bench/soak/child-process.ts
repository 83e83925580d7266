// A long-running helper process of the soak's world (PostgreSQL, Redis, HAProxy): started, watched, stopped.
import { type ChildProcess, type SpawnOptions, spawn } from 'node:child_process'
import { once } from 'node:events'
import { createWriteStream } from 'node:fs'
import { createInterface } from 'node:readline'

const KEPT_LINES = 40

export interface WatchedProcess {
  child: ChildProcess
  /** Its last lines of output, for an error message. */
  tail(): string
  /** Resolves with the exit code (or signal) once the process has exited. */
  exited: Promise<string>
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>
}

/** `logFile`: where all of its output goes too (appended: a restarted process continues the same file). */
export function startWatched(
  command: string,
  args: string[],
  options: SpawnOptions & { logFile?: string } = {},
): WatchedProcess {
  const { logFile, ...spawnOptions } = options
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], ...spawnOptions })
  const lines: string[] = []
  const file = logFile ? createWriteStream(logFile, { flags: 'a' }) : undefined
  for (const stream of [child.stdout, child.stderr]) {
    if (!stream) continue
    createInterface({ input: stream }).on('line', (line) => {
      file?.write(`${line}\n`)
      lines.push(line)
      if (lines.length > KEPT_LINES) lines.shift()
    })
  }
  const exited = once(child, 'exit').then(([code, signal]) => {
    file?.end()
    return String(signal ?? code)
  })
  child.once('error', (error) => lines.push(`spawn failed: ${error.message}`))
  // If the soak dies without its teardown, its helpers must not outlive it.
  const killOnExit = () => child.kill('SIGKILL')
  process.on('exit', killOnExit)
  void exited.then(() => process.off('exit', killOnExit))
  return {
    child,
    tail: () => lines.join('\n'),
    exited,
    async stop(graceMs = 5_000) {
      if (child.exitCode !== null || child.signalCode !== null) return
      child.kill('SIGTERM')
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
      await exited
      clearTimeout(timer)
    },
  }
}

/** Polls `check` every 100 ms until it resolves true; throws with `what` after `timeoutMs`. */
export async function waitUntil(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}
