// Failures of the `anchor` command, each with the exit code it ends with.

export const EXIT = {
  ok: 0,
  /** The document or signature does not verify, or the command failed. */
  failed: 1,
  /** Bad arguments or an unusable input file (not a PDF, encrypted, damaged). */
  input: 2,
  /** The service is unreachable, refused the request, or the login is missing or expired. */
  service: 3,
} as const

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
    /** Stable code for --json output. */
    readonly code: string,
  ) {
    super(message)
    this.name = 'CliError'
  }
}

export const usageError = (message: string) => new CliError(message, EXIT.input, 'USAGE')
