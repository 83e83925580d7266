// A new PGlite data directory starts from the migrated template; an existing one is opened as it is.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'drizzle-orm'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { openDatabase } from '../../src/db/database.ts'
import { templateForNewPgliteDirectory } from '../../src/db/pglite-template.ts'
import { users } from '../../src/db/schema.ts'

describe('templateForNewPgliteDirectory', () => {
  let dir: string
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'anchor-pglite-template-'))
  })
  afterEach(() => rm(dir, { recursive: true, force: true }))

  it('gives a new directory the migrated schema without running a migration, and leaves an existing one alone', async () => {
    const template = await templateForNewPgliteDirectory(dir)
    expect(template).toBeInstanceOf(Blob)
    const first = await openDatabase({ pgliteDir: dir, pgliteTemplate: template })
    const applied = await first.db.execute(sql`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`)
    expect((applied as { rows: { n: number }[] }).rows[0]!.n).toBeGreaterThan(0)
    await first.db.insert(users).values({ email: 'kept@example.com' })
    await first.close()

    expect(await templateForNewPgliteDirectory(dir)).toBeUndefined()
    const reopened = await openDatabase({ pgliteDir: dir })
    const rows = await reopened.db.select().from(users)
    expect(rows.map((row) => row.email)).toEqual(['kept@example.com'])
    await reopened.close()
  })
})
