// The signed PDF's destination, claimed before the anchor is paid for: a missing directory, a read-only one or a
// directory in place of the file fails the command while nothing is spent. The PDF is written beside the target
// and renamed over it, so a failure never leaves half a PDF.

import { type FileHandle, open, rename, rm, stat } from 'node:fs/promises'
import { basename, dirname, join } from 'node:path'
import { CliError, EXIT } from './cli-errors.ts'

export interface ReservedOutput {
  /** Writes the file and moves it into place. */
  write(bytes: Uint8Array): Promise<void>
  /** Removes what is left of the reservation; nothing once written. */
  release(): Promise<void>
}

/** `mode`: the file's permissions (before the umask), 0o666 as for any new file unless given. */
export async function reserveOutput(
  path: string,
  /** `unwritten`: what the refusal tells the user did not happen, e.g. "nothing was signed". */
  { mode = 0o666, unwritten }: { mode?: number; unwritten: string },
): Promise<ReservedOutput> {
  const unwritable = (why: string) =>
    new CliError(`cannot write ${path}: ${why}; ${unwritten}`, EXIT.input, 'OUTPUT_UNWRITABLE')
  const isDirectory = await stat(path).then(
    (found) => found.isDirectory(),
    () => false,
  )
  if (isDirectory) throw unwritable('it is a directory')
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}-${Date.now()}.tmp`)
  let handle: FileHandle | undefined
  try {
    handle = await open(temp, 'wx', mode)
  } catch (error) {
    throw unwritable(reason(error))
  }
  return {
    async write(bytes) {
      await handle!.writeFile(bytes)
      await handle!.close()
      handle = undefined
      await rename(temp, path)
    },
    async release() {
      await handle?.close()
      handle = undefined
      await rm(temp, { force: true })
    },
  }
}

function reason(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'ENOENT') return 'its directory does not exist'
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'its directory is not writable'
  if (code === 'ENOTDIR') return 'part of its path is not a directory'
  return code ?? 'unknown error'
}

/**
 * The signed (or extended) file never replaces the one it was made from (the input is what a signature's document hash
 * covers, and a failed write would lose both), and replaces another existing file only when asked to (`--force`).
 */
export async function refuseToReplace(
  input: string,
  output: string,
  { force, unwritten }: { force: boolean; unwritten: string },
): Promise<void> {
  const [from, to] = await Promise.all([input, output].map((path) => stat(path).catch(() => undefined)))
  if (to === undefined || to.isDirectory()) return
  if (from !== undefined && from.dev === to.dev && from.ino === to.ino) {
    throw new CliError(
      `-o ${output} is the input itself: a signed copy never replaces the file it was made from; ${unwritten}`,
      EXIT.input,
      'OUTPUT_IS_INPUT',
    )
  }
  if (!force) {
    throw new CliError(`${output} exists: add --force to replace it; ${unwritten}`, EXIT.input, 'OUTPUT_EXISTS')
  }
}
