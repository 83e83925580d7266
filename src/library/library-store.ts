// The cloud library in the database: an atomic last-write-wins sync in a fixed number of batched statements, and
// reads answered as JSON text joined from the rows' fields, without re-serializing whole objects.

import { sql } from 'drizzle-orm'
import type { LibraryLimits } from '../config/library-settings.ts'
import type { Database } from '../db/database.ts'
// Aliased: these functions name their results `rows`.
import { type Executor, isoTimestamp, rows as query } from '../db/sql-rows.ts'
import { LibraryLimitError } from './errors.ts'
import type {
  ItemDeletion,
  LibraryChanges,
  LibraryKind,
  SignatureItem,
  SkippedChange,
  SnippetItem,
} from './library-types.ts'
import { resolveDuplicates } from './resolve-duplicates.ts'

export interface LibraryJson {
  /** JSON array texts, ready to send. */
  signatures: string
  snippets: string
}

export interface LibraryStatus {
  exists: boolean
  signatures: number
  snippets: number
  updatedAt: string | null
}

const iso = isoTimestamp

/** What differs between the two kinds: table and content columns. */
interface KindTable<T> {
  kind: LibraryKind
  table: string
  /** Content columns with their SQL types and how to read each from an item, in order. */
  columns: { name: string; type: string; value: (item: T) => unknown }[]
  /** Content columns cleared on a tombstone. */
  cleared: string[]
  limit: (limits: LibraryLimits) => number
}

const SIGNATURES: KindTable<SignatureItem> = {
  kind: 'signature',
  table: 'cloud_signatures',
  columns: [
    { name: 'label', type: 'text', value: (item) => item.label },
    { name: 'base64_png', type: 'text', value: (item) => item.base64Png },
  ],
  cleared: ['label', 'base64_png'],
  limit: (limits) => limits.maxSignatures,
}

const SNIPPETS: KindTable<SnippetItem> = {
  kind: 'snippet',
  table: 'cloud_text_snippets',
  columns: [
    { name: 'label', type: 'text', value: (item) => item.label },
    { name: 'text', type: 'text', value: (item) => item.text },
    { name: 'font_size', type: 'float8', value: (item) => item.fontSize },
  ],
  cleared: ['label', 'text'],
  limit: (limits) => limits.maxSnippets,
}

const sameSignature = (a: SignatureItem, b: SignatureItem) =>
  a.label === b.label && a.base64Png === b.base64Png && a.createdAt === b.createdAt
const sameSnippet = (a: SnippetItem, b: SnippetItem) =>
  a.label === b.label && a.text === b.text && a.fontSize === b.fontSize && a.createdAt === b.createdAt

/**
 * Applies every change in one transaction and returns the library after it plus the changes that lost to newer
 * ones. Rules, per item: a change applies when its clock (`updatedAt`, or `deletedAt`) is newer than the server's;
 * on equal clocks a deletion beats a live item and otherwise the server's copy stays. A change equal to what the
 * server holds is a no-op, not a skip, so retrying a sync is harmless. Throws LibraryLimitError (nothing written)
 * when a kind would end with more live items than allowed and more than it had.
 */
export async function syncLibrary(
  db: Database,
  userId: string,
  changes: LibraryChanges,
  limits: LibraryLimits,
): Promise<{ library: LibraryJson; skipped: SkippedChange[] }> {
  const signatures = resolveDuplicates(
    'signature',
    changes.signatures?.upsert ?? [],
    changes.signatures?.delete ?? [],
    sameSignature,
  )
  const snippets = resolveDuplicates(
    'snippet',
    changes.snippets?.upsert ?? [],
    changes.snippets?.delete ?? [],
    sameSnippet,
  )

  return db.transaction(async (tx) => {
    // One sync per user at a time: the item limits count what concurrent syncs would otherwise both miss, and two
    // batches locking the same rows in different orders cannot deadlock.
    await lockLibrary(tx, userId)
    const before = await liveCounts(tx, userId)
    const skipped = [...signatures.skipped, ...snippets.skipped]
    skipped.push(...(await upsertItems(tx, userId, SIGNATURES, signatures.upserts)))
    skipped.push(...(await deleteItems(tx, userId, SIGNATURES, signatures.deletes, limits.maxTombstones)))
    skipped.push(...(await upsertItems(tx, userId, SNIPPETS, snippets.upserts)))
    skipped.push(...(await deleteItems(tx, userId, SNIPPETS, snippets.deletes, limits.maxTombstones)))

    if (signatures.upserts.length > 0 || snippets.upserts.length > 0) {
      const after = await liveCounts(tx, userId)
      const violations = [
        { kind: SIGNATURES.kind, count: after.signatures, before: before.signatures, limit: SIGNATURES.limit(limits) },
        { kind: SNIPPETS.kind, count: after.snippets, before: before.snippets, limit: SNIPPETS.limit(limits) },
      ]
        // A lowered limit must not stop a user from editing or deleting: only growth past the limit is refused.
        .filter((v) => v.count > v.limit && v.count > v.before)
        .map(({ kind, count, limit }) => ({ kind, count, limit }))
      if (violations.length > 0) throw new LibraryLimitError(violations)
    }
    return { library: await readLibraryJson(tx, userId), skipped }
  })
}

/**
 * Held until the transaction ends. Taken in a statement of its own: in READ COMMITTED each later statement then
 * sees whatever the sync it waited for committed.
 */
async function lockLibrary(db: Executor, userId: string): Promise<void> {
  await db.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`library:${userId}`}, 0))`)
}

async function liveCounts(db: Executor, userId: string): Promise<{ signatures: number; snippets: number }> {
  const rows = await query<{ signatures: number; snippets: number }>(
    db,
    sql`SELECT
      (SELECT count(*)::int FROM cloud_signatures WHERE user_id = ${userId} AND deleted_at IS NULL) AS signatures,
      (SELECT count(*)::int FROM cloud_text_snippets WHERE user_id = ${userId} AND deleted_at IS NULL) AS snippets`,
  )
  return rows[0]!
}

/** One statement for all upserts of a kind; returns the ones that lost to the server's newer state. */
async function upsertItems<T extends { id: string; updatedAt: string; createdAt: string }>(
  db: Executor,
  userId: string,
  kind: KindTable<T>,
  items: T[],
): Promise<SkippedChange[]> {
  if (items.length === 0) return []
  const names = kind.columns.map((column) => column.name)
  const arrays = kind.columns.map((column) => sql`${sql.param(items.map(column.value))}::${sql.raw(column.type)}[]`)
  const table = sql.raw(kind.table)
  const columnList = sql.raw(names.join(', '))
  const set = sql.raw(names.map((name) => `${name} = excluded.${name}`).join(', '))
  const sameAsServer = sql.raw(names.map((name) => `c.${name} = i.${name}`).join(' AND '))
  // The final SELECT reads the table as it was before this statement: an item neither written nor already equal
  // to the server's live copy lost to a newer change.
  const rows = await query<{ id: string }>(
    db,
    sql`WITH input AS (
        SELECT * FROM unnest(
          ${sql.param(items.map((item) => item.id))}::uuid[],
          ${sql.join(arrays, sql`, `)},
          ${sql.param(items.map((item) => item.updatedAt))}::timestamptz[],
          ${sql.param(items.map((item) => item.createdAt))}::timestamptz[]
        ) AS i(id, ${columnList}, updated_at, created_at)
      ), written AS (
        INSERT INTO ${table} AS t (user_id, id, ${columnList}, updated_at, created_at, deleted_at)
        SELECT ${userId}::uuid, id, ${columnList}, updated_at, created_at, NULL FROM input
        ON CONFLICT (user_id, id) DO UPDATE
          SET ${set}, updated_at = excluded.updated_at, created_at = excluded.created_at, deleted_at = NULL
          WHERE excluded.updated_at > t.updated_at
        RETURNING t.id
      )
      SELECT i.id FROM input i
      WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.id = i.id)
        AND NOT EXISTS (
          SELECT 1 FROM ${table} c
          WHERE c.user_id = ${userId} AND c.id = i.id AND c.deleted_at IS NULL
            AND c.updated_at = i.updated_at AND c.created_at = i.created_at AND ${sameAsServer}
        )`,
  )
  return rows.map((row) => ({ kind: kind.kind, id: row.id, op: 'upsert', reason: 'stale' }))
}

/**
 * One statement for all deletions of a kind. An unknown id still gets a tombstone, so that an upsert older than
 * the deletion, still on its way from another device, cannot create the item afterwards.
 */
async function deleteItems<T>(
  db: Executor,
  userId: string,
  kind: KindTable<T>,
  deletions: ItemDeletion[],
  maxTombstones: number,
): Promise<SkippedChange[]> {
  if (deletions.length === 0) return []
  const table = sql.raw(kind.table)
  const clear = sql.raw(kind.cleared.map((name) => `${name} = ''`).join(', '))
  const rows = await query<{ id: string }>(
    db,
    sql`WITH input AS (
        SELECT * FROM unnest(
          ${sql.param(deletions.map((deletion) => deletion.id))}::uuid[],
          ${sql.param(deletions.map((deletion) => deletion.deletedAt))}::timestamptz[]
        ) AS i(id, deleted_at)
      ), written AS (
        INSERT INTO ${table} AS t (user_id, id, updated_at, deleted_at, created_at)
        SELECT ${userId}::uuid, id, deleted_at, deleted_at, deleted_at FROM input
        ON CONFLICT (user_id, id) DO UPDATE
          SET ${clear}, updated_at = excluded.updated_at, deleted_at = excluded.deleted_at
          WHERE excluded.updated_at > t.updated_at OR (excluded.updated_at = t.updated_at AND t.deleted_at IS NULL)
        RETURNING t.id
      )
      SELECT i.id FROM input i
      WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.id = i.id)
        AND NOT EXISTS (
          SELECT 1 FROM ${table} c
          WHERE c.user_id = ${userId} AND c.id = i.id AND c.deleted_at = i.deleted_at AND c.updated_at = i.deleted_at
        )`,
  )
  // Tombstones are bounded: beyond the limit the oldest are forgotten, which only matters to a device offline
  // for longer than that many deletions.
  await db.execute(
    sql`DELETE FROM ${table} t USING (
        SELECT id FROM ${table} WHERE user_id = ${userId} AND deleted_at IS NOT NULL
        ORDER BY deleted_at DESC, id DESC OFFSET ${maxTombstones}
      ) old
      WHERE t.user_id = ${userId} AND t.id = old.id`,
  )
  return rows.map((row) => ({ kind: kind.kind, id: row.id, op: 'delete', reason: 'stale' }))
}

/**
 * The live library as two JSON array texts, read in one statement (one snapshot). Each item's JSON is joined by
 * hand from its fields: V8 concatenates large strings as ropes, so an image is copied once more at most, when the
 * response is written; building the JSON inside PostgreSQL (json_agg) measured 3x slower on PGlite.
 */
export async function readLibraryJson(db: Executor, userId: string): Promise<LibraryJson> {
  const rows = await query<LibraryRow>(
    db,
    sql`SELECT 's' AS kind, id, label, base64_png AS content, NULL::float8 AS font_size,
        ${iso('updated_at')} AS updated_at, ${iso('created_at')} AS created_at
      FROM cloud_signatures WHERE user_id = ${userId} AND deleted_at IS NULL
      UNION ALL
      SELECT 'n', id, label, text, font_size, ${iso('updated_at')}, ${iso('created_at')}
      FROM cloud_text_snippets WHERE user_id = ${userId} AND deleted_at IS NULL
      ORDER BY kind, created_at, id`,
  )
  const signatures: string[] = []
  const snippets: string[] = []
  for (const row of rows) {
    const head = `{"id":"${row.id}","label":${JSON.stringify(row.label)},`
    const tail = `"updatedAt":"${row.updated_at}","createdAt":"${row.created_at}"}`
    if (row.kind === 's') signatures.push(`${head}"base64Png":${JSON.stringify(row.content)},${tail}`)
    else
      snippets.push(`${head}"text":${JSON.stringify(row.content)},"fontSize":${JSON.stringify(row.font_size)},${tail}`)
  }
  return { signatures: `[${signatures.join(',')}]`, snippets: `[${snippets.join(',')}]` }
}

interface LibraryRow {
  kind: 's' | 'n'
  id: string
  label: string
  content: string
  font_size: number | null
  updated_at: string
  created_at: string
}

/** `{"signatures":[...],"snippets":[...]}` plus any further members, joined without re-serializing the items. */
export function libraryResponseJson(library: LibraryJson, extra: Record<string, unknown> = {}): string {
  let json = `{"signatures":${library.signatures},"snippets":${library.snippets}`
  for (const [key, value] of Object.entries(extra)) json += `,${JSON.stringify(key)}:${JSON.stringify(value)}`
  return `${json}}`
}

/** Counts of live items and the newest change (deletions included), in one statement. */
export async function readLibraryStatus(db: Executor, userId: string): Promise<LibraryStatus> {
  const rows = await query<{ signatures: number; snippets: number; updated_at: string | null }>(
    db,
    sql`SELECT s.live AS signatures, n.live AS snippets, ${iso('GREATEST(s.newest, n.newest)')} AS updated_at
      FROM (SELECT count(*) FILTER (WHERE deleted_at IS NULL)::int AS live, max(updated_at) AS newest
            FROM cloud_signatures WHERE user_id = ${userId}) s,
           (SELECT count(*) FILTER (WHERE deleted_at IS NULL)::int AS live, max(updated_at) AS newest
            FROM cloud_text_snippets WHERE user_id = ${userId}) n`,
  )
  const row = rows[0]!
  return {
    exists: row.signatures + row.snippets > 0,
    signatures: row.signatures,
    snippets: row.snippets,
    updatedAt: row.updated_at,
  }
}

/** Removes every library row of the user, tombstones included, atomically and in turn with any running sync. */
export async function deleteLibrary(db: Database, userId: string): Promise<void> {
  await db.transaction(async (tx) => {
    await lockLibrary(tx, userId)
    await tx.execute(sql`DELETE FROM cloud_signatures WHERE user_id = ${userId}`)
    await tx.execute(sql`DELETE FROM cloud_text_snippets WHERE user_id = ${userId}`)
  })
}
