// A migrated, empty PGlite data directory kept as an archive, so that a new data directory loads it (a few hundred
// milliseconds) instead of paying PostgreSQL's initdb and every migration (seconds). Made once per PGlite version and
// set of migrations, by `npm install` (the `prepare` script) or else by the first start that needs it, and kept under
// node_modules/.cache/; the test run clones the same archive for each test file.
import { createHash } from 'node:crypto'
import { mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from './database.ts'
import { MIGRATIONS_FOLDER, migrateDatabase } from './migrate.ts'

const CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/docanchor/', import.meta.url))

/** The template's file: its name holds a hash of the PGlite version and of every migration file, so a change to
 * either makes (and uses) another one, never a stale one. */
async function templatePath(): Promise<string> {
  // PGlite's package.json is not among its exports; it sits beside its entry point's directory.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite')
  const { version } = JSON.parse(await readFile(join(entry, '../../package.json'), 'utf8')) as { version: string }
  const hash = createHash('sha256').update(`pglite ${version}\n`)
  for (const dir of [MIGRATIONS_FOLDER, join(MIGRATIONS_FOLDER, 'meta')]) {
    const files = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isFile())
    for (const file of files.map((entry) => entry.name).sort()) {
      hash.update(`${dir === MIGRATIONS_FOLDER ? '' : 'meta/'}${file}\n`).update(await readFile(join(dir, file)))
    }
  }
  return join(CACHE_DIR, `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`)
}

/** The path of the current template, made first if missing (written under a temporary name, then renamed, so that
 * processes doing this at once never read half an archive). */
export async function ensurePgliteTemplate(): Promise<string> {
  const path = await templatePath()
  if (
    await stat(path).then(
      () => true,
      () => false,
    )
  )
    return path
  const handle = await openDatabase({})
  try {
    await migrateDatabase(handle)
    if (handle.kind !== 'pglite') throw new Error('expected PGlite')
    const dump = await handle.pglite.dumpDataDir('none')
    await mkdir(CACHE_DIR, { recursive: true })
    const temporary = `${path}.${process.pid}.${Date.now()}.tmp`
    try {
      await writeFile(temporary, Buffer.from(await dump.arrayBuffer()))
      await rename(temporary, path)
    } finally {
      await rm(temporary, { force: true })
    }
  } finally {
    await handle.close()
  }
  return path
}

/** The template to start a PGlite directory from: only for a directory PostgreSQL never initialised (an existing
 * one is opened as it is); undefined otherwise. */
export async function templateForNewPgliteDirectory(dir: string): Promise<Blob | undefined> {
  const initialised = await stat(join(dir, 'PG_VERSION')).then(
    () => true,
    () => false,
  )
  if (initialised) return undefined
  // A template that cannot be made or read (a read-only install) only costs the time it would have saved.
  const path = await ensurePgliteTemplate().catch(() => undefined)
  return path === undefined ? undefined : new Blob([await readFile(path)])
}
