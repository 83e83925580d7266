// An account's webhook endpoints (POST /api/webhooks and the rest of docs/api.md, "Webhooks"): registered with a
// secret shown once, listed without it, changed, rotated, tested, replayed, and their attempts read back. Deliveries
// themselves are webhook-dispatcher.ts's; which events an endpoint receives is decided when the event is recorded
// (drizzle/functions/fan_out_event.sql).
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'
import { TooManyWebhooksError } from './errors.ts'
import type { EventType } from './event-feed.ts'
import { newWebhookSecret } from './webhook-signature.ts'

/** Endpoints per account: enough for every integration a person runs, few enough that a fan-out stays cheap. */
export const WEBHOOKS_PER_ACCOUNT = 10
/** How long a rotated secret keeps signing beside the new one, so that receivers can switch without a gap. */
export const ROTATION_OVERLAP_MS = 24 * 60 * 60 * 1000
export const ATTEMPT_PAGE_MAX = 100

export interface Webhook {
  id: string
  url: string
  /** null: every type. */
  events: EventType[] | null
  description: string | null
  status: 'enabled' | 'disabled'
  disabledReason: 'owner' | 'gone' | 'failing' | null
  createdAt: Date
}

export interface WebhookInput {
  url: string
  events?: EventType[] | undefined
  description?: string | undefined
}

const COLUMNS = sql.raw('id, url, events, description, status, disabled_reason, created_at')

export async function createWebhook(
  db: Database,
  userId: string,
  input: WebhookInput,
): Promise<{ webhook: Webhook; secret: string }> {
  const secret = newWebhookSecret()
  // The count and the insert in one statement: two registrations at once cannot both pass the limit's last place.
  const [row] = await rows(
    db,
    sql`INSERT INTO webhooks (user_id, url, events, description, secret)
        SELECT ${userId}, ${input.url}, ${eventList(input.events)}, ${input.description ?? null}, ${secret}
        WHERE (SELECT count(*) FROM webhooks WHERE user_id = ${userId}) < ${WEBHOOKS_PER_ACCOUNT}
        RETURNING ${COLUMNS}`,
  )
  if (!row) throw new TooManyWebhooksError(`at most ${WEBHOOKS_PER_ACCOUNT} webhooks per account`)
  return { webhook: toWebhook(row), secret }
}

export async function listWebhooks(db: Database, userId: string): Promise<Webhook[]> {
  const found = await rows(db, sql`SELECT ${COLUMNS} FROM webhooks WHERE user_id = ${userId} ORDER BY created_at, id`)
  return found.map(toWebhook)
}

export async function findWebhook(db: Database, userId: string, id: string): Promise<Webhook | undefined> {
  const [row] = await rows(db, sql`SELECT ${COLUMNS} FROM webhooks WHERE id = ${id} AND user_id = ${userId}`)
  return row ? toWebhook(row) : undefined
}

export interface WebhookChange {
  url?: string | undefined
  events?: EventType[] | null | undefined
  description?: string | null | undefined
  status?: 'enabled' | 'disabled' | undefined
}

/** The webhook as changed; undefined when the account has no such webhook. Enabling it again clears its failures. */
export async function updateWebhook(
  db: Database,
  userId: string,
  id: string,
  change: WebhookChange,
): Promise<Webhook | undefined> {
  const sets = [sql`updated_at = now()`]
  if (change.url !== undefined) sets.push(sql`url = ${change.url}`)
  if (change.events !== undefined) sets.push(sql`events = ${change.events === null ? null : eventList(change.events)}`)
  if (change.description !== undefined) sets.push(sql`description = ${change.description}`)
  if (change.status === 'disabled') sets.push(sql`status = 'disabled', disabled_reason = 'owner'`)
  if (change.status === 'enabled') sets.push(sql`status = 'enabled', disabled_reason = NULL, failing_since = NULL`)
  const [row] = await rows(
    db,
    sql`UPDATE webhooks SET ${sql.join(sets, sql`, `)} WHERE id = ${id} AND user_id = ${userId} RETURNING ${COLUMNS}`,
  )
  return row ? toWebhook(row) : undefined
}

export async function deleteWebhook(db: Database, userId: string, id: string): Promise<boolean> {
  const deleted = await rows(db, sql`DELETE FROM webhooks WHERE id = ${id} AND user_id = ${userId} RETURNING id`)
  return deleted.length > 0
}

/** A new secret; the one it replaces keeps signing for ROTATION_OVERLAP_MS. Undefined for no such webhook. */
export async function rotateSecret(db: Database, userId: string, id: string): Promise<string | undefined> {
  const secret = newWebhookSecret()
  const [row] = await rows(
    db,
    sql`UPDATE webhooks SET previous_secret = secret, secret = ${secret},
               previous_secret_until = now() + ${ROTATION_OVERLAP_MS} * interval '1 millisecond', updated_at = now()
        WHERE id = ${id} AND user_id = ${userId} RETURNING id`,
  )
  return row ? secret : undefined
}

/** Records a `webhook.test` event and its one delivery, to this webhook alone; false for no such webhook. */
export async function queueTestEvent(db: Database, userId: string, id: string): Promise<boolean> {
  const queued = await rows(
    db,
    sql`WITH hook AS (SELECT id FROM webhooks WHERE id = ${id} AND user_id = ${userId}),
        event AS (
          INSERT INTO events (id, user_id, type, data)
          SELECT 'evt_' || replace(gen_random_uuid()::text, '-', ''), ${userId}, 'webhook.test',
                 jsonb_build_object('webhookId', hook.id)
          FROM hook RETURNING seq
        )
        INSERT INTO webhook_deliveries (webhook_id, event_seq) SELECT hook.id, event.seq FROM hook, event
        RETURNING id`,
  )
  return queued.length > 0
}

/**
 * Delivers again, from the first attempt, the events the webhook was sent (or should have been) that did not
 * arrive: one by id, or all recorded since a time. How many were queued; undefined for no such webhook.
 */
export async function replayDeliveries(
  db: Database,
  userId: string,
  id: string,
  which: { eventId: string } | { since: Date },
): Promise<number | undefined> {
  if (!(await findWebhook(db, userId, id))) return undefined
  const chosen = 'eventId' in which ? sql`e.id = ${which.eventId}` : sql`e.created_at >= ${which.since.toISOString()}`
  const queued = await rows(
    db,
    sql`UPDATE webhook_deliveries d SET status = 'pending', attempts = 0, next_attempt_at = now(), leased_until = NULL
        FROM events e
        WHERE d.event_seq = e.seq AND d.webhook_id = ${id} AND d.status = 'failed' AND ${chosen}
        RETURNING d.id`,
  )
  return queued.length
}

export interface AttemptRecord {
  id: number
  eventId: string
  type: string
  attempt: number
  at: Date
  status: string
  durationMs: number
  response: string
}

/** The webhook's attempts, newest first, after `before` (an attempt id); undefined for no such webhook. */
export async function attemptsOf(
  db: Database,
  userId: string,
  id: string,
  before: number | undefined,
  limit: number,
): Promise<AttemptRecord[] | undefined> {
  if (!(await findWebhook(db, userId, id))) return undefined
  const found = await rows(
    db,
    sql`SELECT id, event_id, event_type, attempt, at, status, duration_ms, response FROM webhook_attempts
        WHERE webhook_id = ${id} ${before === undefined ? sql`` : sql`AND id < ${before}`}
        ORDER BY id DESC LIMIT ${limit}`,
  )
  return found.map((r) => ({
    id: Number(r.id),
    eventId: String(r.event_id),
    type: String(r.event_type),
    attempt: Number(r.attempt),
    at: new Date(r.at as string),
    status: String(r.status),
    durationMs: Number(r.duration_ms),
    response: String(r.response),
  }))
}

function eventList(events: readonly EventType[] | undefined) {
  return events === undefined
    ? null
    : sql`ARRAY[${sql.join(
        events.map((type) => sql`${type}`),
        sql`, `,
      )}]::text[]`
}

function toWebhook(r: Record<string, unknown>): Webhook {
  return {
    id: String(r.id),
    url: String(r.url),
    events: (r.events as EventType[] | null) ?? null,
    description: r.description === null ? null : String(r.description),
    status: r.status as Webhook['status'],
    disabledReason: (r.disabled_reason as Webhook['disabledReason']) ?? null,
    createdAt: new Date(r.created_at as string),
  }
}
