// A migrated, empty PGlite data directory, so that a new data directory starts as a copy of it (a few hundred
// milliseconds) instead of paying PostgreSQL's initdb and every migration (seconds). Made once per PGlite version and
// set of migrations, by `npm install` (the `prepare` script) or else by the first start that needs it, and kept under
// node_modules/.cache/ twice: as an archive, which the test run loads into an in-memory PGlite for each test file, and
// unpacked, which the service copies into a new data directory.
import { createHash } from 'node:crypto'
import type { Dirent } from 'node:fs'
import { copyFile, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { openDatabase } from './database.ts'
import { MIGRATIONS_FOLDER, migrateDatabase } from './migrate.ts'

export const PGLITE_CACHE_DIR = fileURLToPath(new URL('../../node_modules/.cache/docanchor/', import.meta.url))

/** The template's file: its name holds a hash of the PGlite version and of every migration and function file, so a
 * change to any makes (and uses) another one, never a stale one. */
async function templatePath(): Promise<string> {
  // PGlite's package.json is not among its exports; it sits beside its entry point's directory.
  const entry = createRequire(import.meta.url).resolve('@electric-sql/pglite')
  const { version } = JSON.parse(await readFile(join(entry, '../../package.json'), 'utf8')) as { version: string }
  const hash = createHash('sha256').update(`pglite ${version}\n`)
  for (const sub of ['', 'meta/', 'functions/']) {
    const dir = join(MIGRATIONS_FOLDER, sub)
    const files = (await readdir(dir, { withFileTypes: true })).filter((entry) => entry.isFile())
    for (const file of files.map((entry) => entry.name).sort()) {
      hash.update(`${sub}${file}\n`).update(await readFile(join(dir, file)))
    }
  }
  return join(PGLITE_CACHE_DIR, `pglite-template-${hash.digest('hex').slice(0, 16)}.tar`)
}

/** The path of the current template, made first if missing (written under a temporary name, then renamed, so that
 * processes doing this at once never read half an archive). */
export async function ensurePgliteTemplate(): Promise<string> {
  const path = await templatePath()
  if (await exists(path)) return path
  const handle = await openDatabase({})
  try {
    await migrateDatabase(handle)
    if (handle.kind !== 'pglite') throw new Error('expected PGlite')
    const dump = await handle.pglite.dumpDataDir('none')
    await mkdir(PGLITE_CACHE_DIR, { recursive: true })
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

/** The template as a data directory beside the archive, made from it once: a new data directory is a copy of it
 * (~0.4 s for its 40 MB in a thousand files on the 2-core machine, waiting on the disk while the app's modules load),
 * where loading the archive through PGlite unpacks it in JavaScript on the main thread (~0.7 s). Made under a
 * temporary name and renamed, as the archive is. */
export async function ensurePgliteTemplateDirectory(): Promise<string> {
  const archive = await ensurePgliteTemplate()
  const path = archive.replace(/\.tar$/, '')
  if (await exists(join(path, 'PG_VERSION'))) return path
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`
  try {
    const handle = await openDatabase({ pgliteDir: temporary, pgliteTemplate: new Blob([await readFile(archive)]) })
    await handle.close()
    // Another process may have made it meanwhile: theirs is as good.
    await rename(temporary, path).catch(async (error: unknown) => {
      if (!(await exists(join(path, 'PG_VERSION')))) throw error
    })
  } finally {
    await rm(temporary, { recursive: true, force: true })
  }
  return path
}

/** Gives a directory PostgreSQL never initialised a copy of the migrated template (an existing one is left as it
 * is). The copy is made beside it and renamed into place, so a failed copy never leaves a half database behind; a
 * template that cannot be made or copied (a read-only install) only costs the time it would have saved, as PGlite
 * then initialises the directory itself. */
export async function prepareNewPgliteDirectory(dir: string): Promise<void> {
  if (await exists(join(dir, 'PG_VERSION'))) return
  const copy = `${dir}.${process.pid}.${Date.now()}.tmp`
  try {
    await copyDirectory(await ensurePgliteTemplateDirectory(), copy)
    // Replaces `dir` if it is an empty directory; fails, leaving it alone, if it holds anything.
    await rename(copy, dir)
  } catch {
    // PGlite initialises the directory.
  } finally {
    await rm(copy, { recursive: true, force: true })
  }
}

/** Copies a directory tree with every file copy in flight at once: its thousand small files take ~0.4 s on the
 * 2-core machine, where `fs.cp`, one file after another, takes 0.4–1.7 s. */
async function copyDirectory(from: string, to: string): Promise<void> {
  const entries = await readdir(from, { recursive: true, withFileTypes: true })
  const target = (entry: Dirent) => join(to, relative(from, join(entry.parentPath, entry.name)))
  await mkdir(to, { recursive: true })
  await Promise.all(
    entries.filter((entry) => entry.isDirectory()).map((entry) => mkdir(target(entry), { recursive: true })),
  )
  await Promise.all(
    entries
      .filter((entry) => entry.isFile())
      .map((entry) => copyFile(join(entry.parentPath, entry.name), target(entry))),
  )
}

function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  )
}
