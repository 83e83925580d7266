// An account's events, oldest first after a cursor (GET /api/events): what a client that cannot receive webhooks
// follows. The cursor is the last event's `seq`. An event is served only once every transaction that could still add
// one with a lower `seq` has ended (its transaction id below the oldest one still running), so a follower that moved
// past an event never misses one that commits late behind it (src/db/schema.ts, `events`).
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import type { EVENT_TYPES } from '../db/schema.ts'
import { rows } from '../db/sql-rows.ts'

export const EVENT_PAGE_DEFAULT = 100
export const EVENT_PAGE_MAX = 500

export type EventType = (typeof EVENT_TYPES)[number]

export interface AccountEvent {
  /** `evt_…`: the same in the feed and in every delivery of it. */
  id: string
  type: EventType
  timestamp: Date
  data: Record<string, unknown>
}

export interface EventPage {
  events: AccountEvent[]
  /** Where the next page starts: the last event's, or the cursor asked with when there is none yet. */
  next: string
}

const CURSOR_TEXT = /^(0|[1-9]\d{0,17})$/

/** The position a cursor names (0: before the first event), or undefined for anything but a cursor this feed gave. */
export function eventCursorPosition(text: string): number | undefined {
  return CURSOR_TEXT.test(text) ? Number(text) : undefined
}

export async function eventsAfter(db: Database, userId: string, after: number, limit: number): Promise<EventPage> {
  const found = await rows(
    db,
    sql`SELECT seq, id, type, data, created_at FROM events
        WHERE user_id = ${userId} AND seq > ${after} AND xact_id < pg_snapshot_xmin(pg_current_snapshot())
        ORDER BY seq LIMIT ${limit}`,
  )
  const events = found.map((row) => ({
    id: String(row.id),
    type: row.type as EventType,
    timestamp: new Date(row.created_at as string),
    data: (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, unknown>,
  }))
  const last = found.at(-1)
  return { events, next: last ? String(last.seq) : String(after) }
}
