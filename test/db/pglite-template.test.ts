// A new PGlite data directory starts as a copy of the migrated template; an existing one is opened as it is.
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.ts'
import { prepareNewPgliteDirectory } from '../../src/db/pglite-template.ts'
import { users } from '../../src/db/schema.ts'

describe('prepareNewPgliteDirectory', () => {
  let parent: string
  let dir: string
  beforeEach(async () => {
    parent = await mkdtemp(join(tmpdir(), 'anchor-pglite-template-'))
    dir = join(parent, 'pglite')
  })
  afterEach(() => rm(parent, { recursive: true, force: true }))

  it('gives a new directory the migrated schema without running a migration, and leaves an existing one alone', async () => {
    await prepareNewPgliteDirectory(dir)
    const first = await openDatabase({ pgliteDir: dir })
    const applied = await first.db.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`)
    expect((applied as { rows: { n: number }[] }).rows[0]!.n).toBeGreaterThan(0)
    await first.db.insert(users).values({ email: 'kept@example.com' })
    await first.close()

    await prepareNewPgliteDirectory(dir)
    const reopened = await openDatabase({ pgliteDir: dir })
    const rows = await reopened.db.select().from(users)
    expect(rows.map((row) => row.email)).toEqual(['kept@example.com'])
    await reopened.close()
    // The copy was renamed into place: nothing is left beside it.
    expect(await readdir(parent)).toEqual(['pglite'])
  })

  it('fills an empty directory that already exists', async () => {
    await mkdir(dir)
    await prepareNewPgliteDirectory(dir)
    const database = await openDatabase({ pgliteDir: dir })
    expect(await database.db.select().from(users)).toEqual([])
    await database.close()
  })
})
