// Runs the `anchor` command in-process with its own streams, as a terminal would, and collects what it printed.
import { PassThrough } from 'node:stream'
import { capturedOutput } from '../../../../test/helpers/processes/captured-output.ts'
import { runAnchorCommand } from '../../src/anchor-command.ts'
import { loadCliConfig } from '../../src/cli-config.ts'

export interface Run {
  code: number
  stdout: string
  stderr: string
}

/**
 * Runs `anchor ...argv` with `env` as its environment; `input` is written to stdin once it resolves (login codes).
 * `defaultService` stands in for the built-in default (http://127.0.0.1:3000), which no test may count on.
 */
export async function runAnchor(
  argv: string[],
  env: Record<string, string>,
  input?: () => Promise<string>,
  { defaultService }: { defaultService?: string } = {},
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
  const config = loadCliConfig(env)
  if (defaultService !== undefined && !config.serviceUrlConfigured) config.serviceUrl = defaultService
  const code = await runAnchorCommand(argv, { io: { stdin, stdout, stderr }, config })
  return { code, ...output.text() }
}
