// A user's own anchors, newest first, a page at a time (GET /api/anchors). The cursor says where the last page ended
// (its last anchor's creation time and id): keyset pagination, so a page costs the same however deep it lies, and
// anchors made meanwhile neither repeat nor shift the pages after it.
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { UNSIGNED_PREFIX } from '../db/schema.ts'
import { rows } from '../db/sql-rows.ts'

export const HISTORY_PAGE_DEFAULT = 50
export const HISTORY_PAGE_MAX = 100

export interface HistoryEntry {
  txHash: string
  compositeHash: string
  previousTxHash: string
  status: 'pending' | 'confirmed' | 'failed'
  blockNumber: number | null
  createdAt: Date
}

/** Where a page ended: the last anchor it showed. */
export interface HistoryCursor {
  createdAt: Date
  id: string
}

export interface HistoryPage {
  entries: HistoryEntry[]
  /** Where the next page starts; null on the last page. */
  next: HistoryCursor | null
}

const CURSOR_TEXT =
  /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z) ([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/

/** No anchor was made before this service existed, nor after what a four-digit year holds. */
const FIRST_YEAR = 2000
const LAST_YEAR = 9999

/** Opaque to clients: base64url of the time and the id. */
export function encodeCursor(cursor: HistoryCursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()} ${cursor.id}`, 'latin1').toString('base64url')
}

/** The cursor `encodeCursor` made, or undefined for anything else (a hand-made or damaged one). */
export function decodeCursor(text: string): HistoryCursor | undefined {
  const match = CURSOR_TEXT.exec(Buffer.from(text, 'base64url').toString('latin1'))
  if (!match) return undefined
  const createdAt = new Date(match[1]!)
  const cursor = { createdAt, id: match[2]! }
  // Only the one spelling encodeCursor gives (base64url decoding skips what it does not know), and a time an anchor
  // can have: JavaScript takes the year 0000, which PostgreSQL refuses (22008) once the query runs.
  const year = createdAt.getUTCFullYear()
  const plausible = !Number.isNaN(year) && year >= FIRST_YEAR && year <= LAST_YEAR
  return plausible && encodeCursor(cursor) === text ? cursor : undefined
}

export async function anchorHistory(
  db: Database,
  userId: string,
  page: { limit: number; after: HistoryCursor | undefined },
): Promise<HistoryPage> {
  const after = page.after
    ? sql`AND (created_at, id) < (${page.after.createdAt.toISOString()}::timestamptz, ${page.after.id}::uuid)`
    : sql``
  // One more than asked for says whether another page follows. A reservation not yet signed has no transaction to show.
  const found = await rows(
    db,
    sql`SELECT id, tx_hash, composite_hash, previous_tx_hash, status, block_number, created_at
        FROM anchors
        WHERE user_id = ${userId} AND tx_hash NOT LIKE ${`${UNSIGNED_PREFIX}%`} ${after}
        ORDER BY created_at DESC, id DESC
        LIMIT ${page.limit + 1}`,
  )
  const shown = found.slice(0, page.limit)
  const last = shown.at(-1)
  return {
    entries: shown.map((r) => ({
      txHash: String(r.tx_hash),
      compositeHash: String(r.composite_hash),
      previousTxHash: String(r.previous_tx_hash),
      status: r.status as HistoryEntry['status'],
      blockNumber: r.block_number === null ? null : Number(r.block_number),
      createdAt: new Date(r.created_at as string),
    })),
    next:
      found.length > page.limit && last
        ? { createdAt: new Date(last.created_at as string), id: String(last.id) }
        : null,
  }
}
