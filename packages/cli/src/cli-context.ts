// What every `anchor` subcommand receives: its streams, its configuration, and a fetch tests may route.

import { readFile, stat } from 'node:fs/promises'
import { type ParseArgsConfig, parseArgs } from 'node:util'
import { escapeDisplayControls, escapeDisplayControlsInJson } from '@docanchor/client/display-text'
import type { CliConfig } from './cli-config.ts'
import { CliError, EXIT, usageError } from './cli-errors.ts'
import { readStoredLogin } from './token-store.ts'

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

/** node:util parseArgs with its errors turned into usage errors, and negative numbers taken as values. */
export function parseCommandArgs<T extends NonNullable<ParseArgsConfig['options']>>(
  argv: readonly string[],
  options: T,
) {
  try {
    return parseArgs({ args: joinNegativeValues(argv, options), options, strict: true, allowPositionals: true })
  } catch (error) {
    throw usageError((error as Error).message)
  }
}

const NEGATIVE_NUMBER = /^-\.?\d/

/**
 * parseArgs reads an argument that starts with a dash as an option, so `--x -50` fails; written `--x=-50` it is the
 * value. Only after an option that takes a value, and only for what reads as a number: `-o -file.pdf` stays an error.
 */
function joinNegativeValues(argv: readonly string[], options: NonNullable<ParseArgsConfig['options']>): string[] {
  const longName = new Map<string, string>()
  for (const [name, option] of Object.entries(options)) {
    if (option.type !== 'string') continue
    longName.set(`--${name}`, name)
    if (option.short) longName.set(`-${option.short}`, name)
  }
  const joined: string[] = []
  for (let i = 0; i < argv.length; i++) {
    const argument = argv[i]!
    if (argument === '--') {
      joined.push(...argv.slice(i))
      break
    }
    const name = longName.get(argument)
    const next = argv[i + 1]
    if (name !== undefined && next !== undefined && NEGATIVE_NUMBER.test(next)) {
      joined.push(`--${name}=${next}`)
      i++
    } else joined.push(argument)
  }
  return joined
}

/**
 * A numeric option's value, undefined when absent; a usage error saying what is allowed (`expected`, e.g. "a number
 * from 36 to 1000") when it is not a number `check` accepts.
 */
export function numberOption(
  name: string,
  value: string | undefined,
  check: (n: number) => boolean,
  expected: string,
): number | undefined {
  if (value === undefined) return undefined
  const parsed = Number(value)
  if (value.trim() === '' || !Number.isFinite(parsed) || !check(parsed))
    throw usageError(`--${name} ${value} is not valid: it must be ${expected}`)
  return parsed
}

/** The service the user configured (--service, ANCHOR_URL, else the stored login's), or undefined for none. */
export async function configuredService(context: CliContext, flag: string | undefined): Promise<string | undefined> {
  if (flag !== undefined || context.config.serviceUrlConfigured) return serviceUrl(context, flag)
  const stored = (await readStoredLogin(context.config.configDir))?.service
  return stored === undefined ? undefined : serviceUrl(context, stored)
}

/**
 * Where a command that needs the login goes: the configured service (`anchor login --service` configures it for the
 * commands after it), else the default. With ANCHOR_TOKEN the stored login is not the one used: not looked at.
 */
export async function loginServiceUrl(context: CliContext, flag: string | undefined): Promise<string> {
  const configured = context.config.token === undefined ? await configuredService(context, flag) : undefined
  return configured ?? serviceUrl(context, flag)
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

/**
 * JSON for scripts. JSON.stringify escapes C0 controls but writes C1 controls and bidirectional formatting characters
 * as they are: those are escaped too (`\u009b`, `\u202e`), so the text stays the same data and no terminal acts on it.
 */
export function writeJson(io: CliIo, value: unknown): void {
  io.stdout.write(`${escapeDisplayControlsInJson(JSON.stringify(value, null, 2))}\n`)
}

/**
 * Writes lines for a person to read. Each line may hold what a payload, a PDF or a service said (a signer's name, an
 * e-mail address): its control and bidirectional formatting characters are shown as `<U+XXXX>`, line breaks
 * included, so no such text can move the cursor, erase a line, hide text or reverse what follows it.
 */
export function writeLines(stream: NodeJS.WritableStream, lines: readonly string[]): void {
  stream.write(`${lines.map((line) => escapeDisplayControls(line)).join('\n')}\n`)
}

/**
 * The command's streams, every write escaping control and bidirectional formatting characters but line breaks: what
 * a message quotes (an error naming a file's contents, a service's answer) reaches the terminal as text. Lines built
 * from such text are written with writeLines, which escapes their line breaks too.
 */
export function displaySafeIo(io: CliIo): CliIo {
  return { stdin: io.stdin, stdout: displaySafe(io.stdout), stderr: displaySafe(io.stderr) }
}

function displaySafe(stream: NodeJS.WritableStream): NodeJS.WritableStream {
  return new Proxy(stream, {
    get(target, property) {
      if (property === 'write') {
        return (chunk: unknown, ...rest: unknown[]) =>
          (target.write as (...args: unknown[]) => boolean)(
            typeof chunk === 'string' ? escapeDisplayControls(chunk, { keepNewlines: true }) : chunk,
            ...rest,
          )
      }
      const value = Reflect.get(target, property, target)
      return typeof value === 'function' ? value.bind(target) : value
    },
  })
}

/** Reads a file the user named; `maxBytes` refuses a larger one before reading it. */
export async function readInputFile(path: string, maxBytes = Number.POSITIVE_INFINITY): Promise<Uint8Array> {
  const found = await stat(path).catch((error: unknown) => {
    throw unreadable(path, error)
  })
  if (found.isDirectory()) throw new CliError(`cannot read ${path}: it is a directory`, EXIT.input, 'FILE_UNREADABLE')
  if (found.size > maxBytes) {
    throw new CliError(
      `${path} is ${sizeText(found.size)}; the most this command reads is ${sizeText(maxBytes)}`,
      EXIT.input,
      'FILE_TOO_LARGE',
    )
  }
  return new Uint8Array(
    await readFile(path).catch((error: unknown) => {
      throw unreadable(path, error)
    }),
  )
}

function unreadable(path: string, error: unknown): CliError {
  const code = (error as NodeJS.ErrnoException).code
  return new CliError(
    `cannot read ${path}: ${code === 'ENOENT' ? 'no such file' : code}`,
    EXIT.input,
    'FILE_UNREADABLE',
  )
}

const sizeText = (bytes: number) => (bytes < 2 ** 20 ? `${bytes} bytes` : `${Math.ceil(bytes / 2 ** 20)} MB`)
