// The user password of an encrypted PDF comes from a file (or stdin), never from the command line: other users of
// the machine see a process's arguments, and shells keep them in their history.

import type { PdfError } from '@docanchor/client'
import { type CliIo, readInputFile } from './cli-context.ts'
import { CliError, EXIT, usageError } from './cli-errors.ts'

export const PASSWORD_FILE_OPTION = { 'password-file': { type: 'string' } } as const

/** A PDF password is at most 127 bytes (ISO 32000-2, 7.6.4.3.3); a longer file is not a password file. */
const MAX_PASSWORD_FILE_BYTES = 1024

/** Refuses `--password` before parseArgs would call it merely unknown, saying where a password goes. */
export function refusePasswordOnCommandLine(argv: readonly string[]): void {
  const end = argv.indexOf('--')
  const options = end === -1 ? argv : argv.slice(0, end)
  if (options.some((argument) => argument === '--password' || argument.startsWith('--password='))) {
    throw usageError(
      'a password is never given on the command line, where others can see it: put it in a file and give ' +
        '--password-file <file> (or --password-file - to read it from stdin)',
    )
  }
}

/** The password in `path` (`-`: stdin) without the line break that ends the file; undefined without the option. */
export async function readPasswordFile(path: string | undefined, io: CliIo): Promise<string | undefined> {
  if (path === undefined) return undefined
  const bytes = path === '-' ? await readStdin(io) : await readInputFile(path, MAX_PASSWORD_FILE_BYTES)
  if (bytes.length > MAX_PASSWORD_FILE_BYTES) throw usageError('the password read from stdin is longer than 1024 bytes')
  return new TextDecoder().decode(bytes).replace(/\r?\n$/, '')
}

async function readStdin(io: CliIo): Promise<Uint8Array> {
  const chunks: Buffer[] = []
  let length = 0
  for await (const chunk of io.stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer)
    chunks.push(buffer)
    length += buffer.length
    if (length > MAX_PASSWORD_FILE_BYTES) break
  }
  return new Uint8Array(Buffer.concat(chunks))
}

/** A password that was given but does not open the PDF, said as such rather than as a missing one. */
export function wrongPassword(error: unknown, given: string | undefined, file: string): unknown {
  if (given !== undefined && (error as PdfError | undefined)?.code === 'ERR_PDF_PASSWORD') {
    return new CliError(`the password given with --password-file does not open ${file}`, EXIT.input, 'PDF_PASSWORD')
  }
  return error
}
