// drizzle/functions/ holds the current text of every PL/pgSQL function: a migrated database runs exactly those texts,
// and a function created anywhere else (a migration, by hand) without its file is found.
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { functionTexts } from '../../src/db/migrate.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'

describe('the PL/pgSQL functions, one file each', () => {
  let database: TestDatabase

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => database?.close())

  it('are the functions a migrated database holds, each with its file’s body', async () => {
    const held = await database.handle.query<{ proname: string; prosrc: string }>(
      `SELECT p.proname, p.prosrc FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
       WHERE l.lanname = 'plpgsql' AND p.pronamespace = 'public'::regnamespace`,
    )
    const files = new Map(
      (await functionTexts()).map((text) => {
        const name = /CREATE OR REPLACE FUNCTION (\w+)\(/.exec(text)?.[1]
        return [name, text.split('$$')[1]] as const
      }),
    )
    expect(held.map((row) => row.proname).sort()).toEqual([
      'anchor_event',
      'attach_signed',
      'countersigned_event',
      'fan_out_event',
      'mark_mined',
      'notify_anchors_changed',
      'reserve_anchors',
      'take_nonce',
      'verify_index',
    ])
    expect([...files.keys()].sort()).toEqual(held.map((row) => row.proname).sort())
    for (const row of held) expect(files.get(row.proname), row.proname).toBe(row.prosrc)
  })
})
