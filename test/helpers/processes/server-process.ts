// Runs the service as a real child process through `npm start`'s entry point (`node bin/server.js`: the precompiled
// build while it is fresh, else the sources through tsx), and waits for it to serve.
import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('../../..', import.meta.url))

export interface ServerProcess {
  child: ChildProcess
  url: string
  /** Every line the process wrote to stdout and stderr so far. */
  output: string[]
  /** Sends a signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>
}

/**
 * Starts the service with exactly `env` (plus PATH and HOME) and resolves once it logged its URL; `root` is the
 * installation it runs from (this checkout unless given).
 */
export async function startServerProcess(
  env: Record<string, string>,
  timeoutMs = 60_000,
  root = ROOT,
): Promise<ServerProcess> {
  const child = spawn(process.execPath, ['bin/server.js'], {
    cwd: root,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: '0', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const output: string[] = []
  const exited = once(child, 'exit').then(([code]) => code as number | null)
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`server did not start:\n${output.join('\n')}`)), timeoutMs)
    const onLine = (chunk: Buffer) => {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        output.push(line)
        const match = /ready at (http:\/\/[^\s"]+)/.exec(line)
        if (match) {
          clearTimeout(timer)
          resolve(match[1]!)
        }
      }
    }
    child.stdout!.on('data', onLine)
    child.stderr!.on('data', onLine)
    exited.then((code) => {
      clearTimeout(timer)
      reject(new Error(`server exited with ${code} before it was ready:\n${output.join('\n')}`))
    })
  })
  return {
    child,
    url,
    output,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode
      child.kill(signal)
      return exited
    },
  }
}
