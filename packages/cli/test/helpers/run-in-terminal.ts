// Runs the real `anchor` command (bin/anchor.js, a child process) in a pseudo-terminal made by util-linux's `script`,
// as a person types it: what ends by itself must end there too, not only when its streams are pipes.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'

const ANCHOR = fileURLToPath(new URL('../../bin/anchor.js', import.meta.url))

/** Its exit code, or 'still running' when it has not ended within `timeoutMs` (then it is killed); what it printed. */
export async function runAnchorInTerminal(
  argv: string[],
  env: Record<string, string>,
  timeoutMs = 30_000,
): Promise<{ code: number | null | 'still running'; output: string }> {
  const quote = (arg: string) => `'${arg.replaceAll("'", "'\\''")}'`
  const command = [process.execPath, ANCHOR, ...argv].map(quote).join(' ')
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  let timer: NodeJS.Timeout | undefined
  const still = new Promise<'still running'>((resolve) => {
    timer = setTimeout(() => resolve('still running'), timeoutMs)
  })
  try {
    return { code: await Promise.race([exited, still]), output }
  } finally {
    clearTimeout(timer)
    child.kill('SIGKILL')
  }
}
