// What the service writes is its own: the embedded database (e-mail addresses in its WAL), the chain's state, the
// development keys. Another local user must read and write none of it, whatever umask the service was started with.
import { chmod, readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Files 0600, directories 0700: every file this process creates from now on. */
export function createOwnerOnlyFiles(): void {
  process.umask(0o077)
}

/**
 * Takes group and others' access from everything under `dir` (made by an older version, or under a wider umask):
 * files keep their owner's bits, directories become 0700. A missing directory is nothing to do.
 */
export async function restrictToOwner(dir: string): Promise<void> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return undefined
    throw error
  })
  if (!entries) return
  const { mode } = await stat(dir)
  if ((mode & 0o077) !== 0) await chmod(dir, 0o700)
  for (const entry of entries) {
    const path = join(dir, entry.name)
    if (entry.isDirectory()) await restrictToOwner(path)
    else if (entry.isFile()) {
      const fileMode = (await stat(path)).mode & 0o777
      if ((fileMode & 0o077) !== 0) await chmod(path, fileMode & 0o700)
    }
  }
}

/**
 * Whether each of `paths` that exists is its owner's alone: a few stats that tell a start whether `restrictToOwner`
 * has anything to do, rather than walking thousands of files at every start.
 */
export async function ownerOnly(...paths: string[]): Promise<boolean> {
  for (const path of paths) {
    const found = await stat(path).catch(() => undefined)
    if (found && (found.mode & 0o077) !== 0) return false
  }
  return true
}
