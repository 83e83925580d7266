// Runs the `anchor` command in-process with its own streams, as a terminal would, and collects what it printed.
import { PassThrough } from 'node:stream'
import { capturedOutput } from '../../../../test/helpers/captured-output.ts'
import { runAnchorCommand } from '../../src/anchor-command.ts'
import { loadCliConfig } from '../../src/cli-config.ts'

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/** Runs `anchor ...argv` with `env` as its environment; `input` is written to stdin once it resolves (login codes). */
export async function runAnchor(
  argv: string[],
  env: Record<string, string>,
  input?: () => Promise<string>,
): Promise<Run> {
  const stdin = new PassThrough()
  const output = capturedOutput()
  const { stdout, stderr } = output
  if (input)
    input().then(
      (text) => stdin.end(text),
      (error) => stdin.destroy(error),
    )
  else stdin.end()
  const code = await runAnchorCommand(argv, { io: { stdin, stdout, stderr }, config: loadCliConfig(env) })
  return { code, ...output.text() }
}
