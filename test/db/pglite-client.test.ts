import { PGlite } from '@electric-sql/pglite'
import { sql } from 'drizzle-orm'
import { drizzle } from 'drizzle-orm/pglite'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { openPgliteForDrizzle } from '../../src/db/pglite-client.ts'

// Every type drizzle passes a parser for, alone and in arrays, next to types it leaves to PGlite.
const EVERY_TYPE = sql`SELECT
  '2026-11-22 01:02:03.456789'::timestamp AS ts,
  '2026-11-22 01:02:03.456789+05:30'::timestamptz AS tstz,
  '1 day 02:03:04'::interval AS iv,
  '2026-11-22'::date AS d,
  ARRAY[1.5, 2.25]::numeric[] AS nums,
  ARRAY['2026-01-01 00:00:00'::timestamp] AS tss,
  ARRAY['2026-01-01 00:00:00+00'::timestamptz, NULL] AS tstzs,
  ARRAY['1 hour'::interval] AS ivs,
  ARRAY['2026-01-01'::date] AS ds,
  42::int AS n,
  ARRAY[1, 2]::int[] AS ns,
  '{"a": [1]}'::jsonb AS j,
  12345678901234::bigint AS big,
  NULL::timestamptz AS nothing`

describe('openPgliteForDrizzle', () => {
  let plain: PGlite
  let tuned: PGlite

  beforeAll(async () => {
    plain = new PGlite()
    tuned = await openPgliteForDrizzle({})
    for (const client of [plain, tuned]) {
      await client.exec(`CREATE TABLE t (id int PRIMARY KEY, at timestamptz NOT NULL, day date, span interval)`)
      await client.exec(`INSERT INTO t VALUES (1, '2026-11-22 10:00:00+00', '2026-11-22', '90 minutes')`)
    }
  })

  afterAll(async () => {
    await plain.close()
    await tuned.close()
  })

  it('gives drizzle exactly what the plain client gives it, for raw SQL and inside transactions', async () => {
    const run = async (client: PGlite) => {
      const db = drizzle({ client })
      const direct = await db.execute(EVERY_TYPE)
      const inTransaction = await db.transaction((tx) => tx.execute(EVERY_TYPE))
      const table = await db.execute(sql`SELECT * FROM t`)
      return [direct.rows, inTransaction.rows, table.rows]
    }
    const expected = await run(plain)
    expect(await run(tuned)).toEqual(expected)
    // The test would pass vacuously if drizzle's parsers were not in play: the text forms prove they are.
    expect(expected[0]![0]).toMatchObject({
      tstz: '2026-11-21 19:32:03.456789+00',
      tstzs: '{"2026-01-01 00:00:00+00",NULL}',
    })
  })

  it('still honours a per-query parser it does not hold', async () => {
    const result = await tuned.query<{ n: string }>('SELECT 42::int AS n', [], {
      parsers: { 23: (value: string) => `int:${value}` },
    })
    expect(result.rows[0]!.n).toBe('int:42')
  })

  it('leaves direct callers the same types as a plain client for everything but the text-kept ones', async () => {
    const [plainRow] = (await plain.query('SELECT 42::int AS n, ARRAY[1, 2]::int[] AS ns, 1::bigint AS b')).rows
    const [tunedRow] = (await tuned.query('SELECT 42::int AS n, ARRAY[1, 2]::int[] AS ns, 1::bigint AS b')).rows
    expect(tunedRow).toEqual(plainRow)
  })
})
