// The `anchor` command: a table of subcommands and one place that turns failures into messages and exit codes.
// Another subcommand (serve, deploy) is one more entry in the table.

import { FormatError } from '../formats/errors.ts'
import { PdfError } from '../pdf/pdf-errors.ts'
import { type CliCommand, type CliContext, writeJson } from './cli-context.ts'
import { CliError, EXIT } from './cli-errors.ts'
import { loginCommand } from './commands/login.ts'
import { logoutCommand } from './commands/logout.ts'
import { signCommand } from './commands/sign.ts'
import { verifyCommand } from './commands/verify.ts'

export const anchorCommands: Record<string, CliCommand> = {
  login: loginCommand,
  logout: logoutCommand,
  sign: signCommand,
  verify: verifyCommand,
}

function overview(): string {
  const names = Object.keys(anchorCommands)
  const width = Math.max(...names.map((name) => name.length))
  return [
    'usage: anchor <command> [options]',
    '',
    ...names.map((name) => `  ${name.padEnd(width)}  ${anchorCommands[name]!.summary}`),
    '',
    'The service is --service <url>, else ANCHOR_URL, else http://127.0.0.1:3000. ANCHOR_TOKEN overrides the',
    'stored login. `anchor <command> --help` shows the options of a command.',
  ].join('\n')
}

/** What the user can do about each kind of unusable PDF. */
const PDF_ADVICE: Record<PdfError['code'], string> = {
  ERR_NOT_PDF: '',
  ERR_PDF_ENCRYPTED: '; remove the password first (qpdf --decrypt --password=<password> in.pdf out.pdf)',
  ERR_PDF_DAMAGED: '; a repaired copy may work (qpdf in.pdf repaired.pdf), but signatures in it will not verify',
  ERR_PDF_UNSUPPORTED: '',
}

function describeFailure(error: unknown): CliError {
  if (error instanceof CliError) return error
  if (error instanceof PdfError) {
    return new CliError(`${error.message}${PDF_ADVICE[error.code]}`, EXIT.input, error.code)
  }
  if (error instanceof FormatError) return new CliError(error.message, EXIT.input, error.code)
  return new CliError(`unexpected error: ${(error as Error).message}`, EXIT.failed, 'INTERNAL')
}

/** Runs `anchor <argv>`; resolves with the exit code. */
export async function runAnchorCommand(argv: readonly string[], context: CliContext): Promise<number> {
  const [name, ...rest] = argv
  const { io } = context
  if (name === undefined || name === 'help' || name === '--help' || name === '-h') {
    ;(name === undefined ? io.stderr : io.stdout).write(`${overview()}\n`)
    return name === undefined ? EXIT.input : EXIT.ok
  }
  const command = anchorCommands[name]
  if (!command) {
    io.stderr.write(`anchor: unknown command ${JSON.stringify(name)}\n\n${overview()}\n`)
    return EXIT.input
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(`usage: ${command.usage}\n`)
    return EXIT.ok
  }
  try {
    return await command.run(rest, context)
  } catch (error) {
    const failure = describeFailure(error)
    io.stderr.write(`anchor ${name}: ${failure.message}\n`)
    if (failure.code === 'USAGE') io.stderr.write(`usage: ${command.usage}\n`)
    if (rest.includes('--json')) writeJson(io, { error: { code: failure.code, message: failure.message } })
    return failure.exitCode
  }
}
