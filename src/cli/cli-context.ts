// What every `anchor` subcommand receives: its streams, its configuration, and a fetch tests may route.

import { readFile } from 'node:fs/promises'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import type { CliConfig } from './cli-config.ts'
import { CliError, EXIT, usageError } from './cli-errors.ts'

export interface CliIo {
  stdin: NodeJS.ReadableStream & { isTTY?: boolean }
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
}

export interface CliContext {
  io: CliIo
  config: CliConfig
  fetch?: typeof fetch
}

/** Resolves with the exit code; throws CliError (or PdfError, FormatError) for the dispatcher to report. */
export type CliRun = (argv: readonly string[], context: CliContext) => Promise<number>

export interface CliCommand {
  summary: string
  usage: string
  /** Imports the command's module only when it runs, so `--help` and a mistyped name load none of them. */
  load(): Promise<CliRun>
}

/** node:util parseArgs with its errors turned into usage errors. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: T,
) {
  try {
    return parseArgs({ args: [...argv], options, strict: true, allowPositionals: true })
  } catch (error) {
    throw usageError((error as Error).message)
  }
}

/** A numeric option's value, undefined when absent; a usage error when it is not a number `check` accepts. */
export function numberOption(
  name: string,
  value: string | undefined,
  check: (n: number) => boolean,
): number | undefined {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isFinite(parsed) || !check(parsed))
    throw usageError(`--${name} ${value} is not valid`)
  return parsed
}

/** --service, else ANCHOR_URL, else the default; without a trailing slash. */
export function serviceUrl(context: CliContext, flag: string | undefined): string {
  const url = flag ?? context.config.serviceUrl
  try {
    const parsed = new URL(url)
    if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new Error('scheme')
  } catch {
    throw usageError(`the service URL must be an http or https URL, not ${JSON.stringify(url)}`)
  }
  return url.replace(/\/+$/, '')
}

export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${JSON.stringify(value, null, 2)}\n`)
}

export async function readInputFile(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path))
  } catch (error) {
    throw new CliError(`cannot read ${path}: ${(error as NodeJS.ErrnoException).code}`, EXIT.input, 'FILE_UNREADABLE')
  }
}
