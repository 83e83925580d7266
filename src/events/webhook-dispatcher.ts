// Delivers the webhook deliveries that are due, from the database, so that any instance picks up what another left:
// at most one attempt per endpoint at a time, and a few at once in all, so a slow receiver cannot hold the workers. An
// attempt is leased (leased_until): an instance that dies mid-attempt leaves it to be tried again once the lease ends,
// so an event may arrive twice but is never lost; receivers drop repeats by `webhook-id`, as Standard Webhooks asks.
// Only a 2xx is success; 410 Gone disables the endpoint; anything else is tried again on the schedule
// (WEBHOOK_RETRY_DELAYS_SECONDS, with jitter, later when the answer's Retry-After says so), and an endpoint that fails
// for WEBHOOK_DISABLE_AFTER_HOURS is disabled and its owner told.
import type { KeyObject } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { WebhookSettings } from '../config/webhook-settings.ts'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'
import { currentSigningKey } from './signing-keys.ts'
import { type AttemptOutcome, postDelivery } from './webhook-request.ts'
import { webhookSignature } from './webhook-signature.ts'

/** Attempts under way at once, across endpoints. */
const CONCURRENCY = 8
/** A lease outlasts the attempt's own deadline by this much. */
const LEASE_MARGIN_MS = 30_000
/** The longest a Retry-After may push the next attempt: the schedule's own longest wait. */
const RETRY_AFTER_CAP_MS = 10 * 60 * 60 * 1000
/** How long the signing key is used before the database is asked again (a new key reaches every instance). */
const KEY_TTL_MS = 5 * 60 * 1000

export interface DispatcherLogger {
  info(object: object, message: string): void
  warn(object: object, message: string): void
}

export interface DisabledEndpoint {
  userId: string
  webhookId: string
  url: string
  reason: 'gone' | 'failing'
}

interface Claimed {
  deliveryId: string
  attempt: number
  webhookId: string
  userId: string
  url: string
  secrets: string[]
  eventId: string
  type: string
  timestamp: Date
  data: unknown
}

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<number> | undefined
  private stopped = false
  private key: { key: KeyObject; until: number } | undefined

  constructor(
    private readonly db: Database,
    private readonly settings: WebhookSettings,
    private readonly log: DispatcherLogger,
    /** Tells an endpoint's owner it was disabled (the mailer), once. */
    private readonly onDisabled: (endpoint: DisabledEndpoint) => Promise<void> = async () => {},
  ) {}

  start(): void {
    if (this.settings.dispatchIntervalMs <= 0) return
    const schedule = () => {
      if (this.stopped) return
      this.timer = setTimeout(async () => {
        await this.tick().catch((error: unknown) => this.log.warn({ err: error }, 'webhook dispatch failed'))
        schedule()
      }, this.settings.dispatchIntervalMs)
      this.timer.unref()
    }
    schedule()
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running?.catch(() => {})
  }

  /** Attempts every delivery due now (one per endpoint); how many it attempted. */
  tick(): Promise<number> {
    this.running ??= this.dispatch().finally(() => {
      this.running = undefined
    })
    return this.running
  }

  private async dispatch(): Promise<number> {
    const claimed = await this.claim()
    if (claimed.length === 0) return 0
    const key = await this.signingKey()
    await Promise.all(claimed.map((delivery) => this.attempt(delivery, key)))
    return claimed.length
  }

  private async claim(): Promise<Claimed[]> {
    const leaseMs = this.settings.timeoutMs + LEASE_MARGIN_MS
    // The row's WHERE is checked again under its lock: of two instances choosing the same delivery, one takes it.
    const found = await rows(
      this.db,
      sql`WITH due AS (
            SELECT DISTINCT ON (d.webhook_id) d.id FROM webhook_deliveries d
            JOIN webhooks w ON w.id = d.webhook_id AND w.status = 'enabled'
            WHERE d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.leased_until IS NULL OR d.leased_until < now())
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x
                              WHERE x.webhook_id = d.webhook_id AND x.status = 'pending' AND x.leased_until > now())
            ORDER BY d.webhook_id, d.next_attempt_at, d.event_seq
            LIMIT ${CONCURRENCY}
          ),
          leased AS (
            UPDATE webhook_deliveries d SET attempts = d.attempts + 1,
                   leased_until = now() + ${leaseMs} * interval '1 millisecond'
            FROM due WHERE d.id = due.id AND d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
            RETURNING d.id, d.attempts, d.webhook_id, d.event_seq
          )
          SELECT l.id, l.attempts, w.id AS webhook_id, w.user_id, w.url, w.secret,
                 CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END AS previous_secret,
                 e.id AS event_id, e.type, e.created_at, e.data
          FROM leased l JOIN webhooks w ON w.id = l.webhook_id JOIN events e ON e.seq = l.event_seq`,
    )
    return found.map((r) => ({
      deliveryId: String(r.id),
      attempt: Number(r.attempts),
      webhookId: String(r.webhook_id),
      userId: String(r.user_id),
      url: String(r.url),
      secrets: [String(r.secret), ...(r.previous_secret === null ? [] : [String(r.previous_secret)])],
      eventId: String(r.event_id),
      type: String(r.type),
      timestamp: new Date(r.created_at as string),
      data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data,
    }))
  }

  private async signingKey(): Promise<KeyObject> {
    if (this.key && this.key.until > Date.now()) return this.key.key
    const { key } = await currentSigningKey(this.db)
    this.key = { key, until: Date.now() + KEY_TTL_MS }
    return key
  }

  private async attempt(delivery: Claimed, signingKey: KeyObject): Promise<void> {
    const body = JSON.stringify({
      type: delivery.type,
      timestamp: delivery.timestamp.toISOString(),
      data: delivery.data,
    })
    const timestamp = Math.floor(Date.now() / 1000)
    const headers = {
      'user-agent': 'docanchor-webhooks/1',
      'webhook-id': delivery.eventId,
      'webhook-timestamp': String(timestamp),
      'webhook-signature': webhookSignature(
        { id: delivery.eventId, timestamp, body },
        { secrets: delivery.secrets, signingKey },
      ),
    }
    const started = performance.now()
    const outcome = await postDelivery(delivery.url, headers, body, this.settings)
    const durationMs = Math.round(performance.now() - started)
    await this.record(delivery, outcome, durationMs)
  }

  private async record(delivery: Claimed, outcome: AttemptOutcome, durationMs: number): Promise<void> {
    const status = outcome.kind === 'answered' ? String(outcome.status) : outcome.kind
    const delivered = outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300
    const gone = outcome.kind === 'answered' && outcome.status === 410
    const exhausted = delivery.attempt > this.settings.retryDelaysMs.length
    const nextInMs = delivered || gone || exhausted ? 0 : this.delayAfter(delivery.attempt, outcome)
    const disabled = await this.db.transaction(async (tx) => {
      await tx.execute(
        sql`INSERT INTO webhook_attempts (webhook_id, event_id, event_type, attempt, status, duration_ms, response)
            VALUES (${delivery.webhookId}, ${delivery.eventId}, ${delivery.type}, ${delivery.attempt}, ${status},
                    ${durationMs}, ${outcome.response})`,
      )
      await tx.execute(
        sql`UPDATE webhook_deliveries
            SET status = ${delivered ? 'delivered' : gone || exhausted ? 'failed' : 'pending'}, leased_until = NULL,
                next_attempt_at = now() + ${nextInMs} * interval '1 millisecond'
            WHERE id = ${delivery.deliveryId}`,
      )
      if (delivered) {
        await tx.execute(sql`UPDATE webhooks SET failing_since = NULL WHERE id = ${delivery.webhookId}`)
        return undefined
      }
      const [hook] = await rows(
        tx,
        sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = ${delivery.webhookId}
            RETURNING status, failing_since < now() - ${this.settings.disableAfterMs} * interval '1 millisecond' AS stale`,
      )
      const reason = gone ? 'gone' : hook?.stale === true ? 'failing' : undefined
      if (!reason || hook?.status !== 'enabled') return undefined
      await tx.execute(
        sql`UPDATE webhooks SET status = 'disabled', disabled_reason = ${reason}, updated_at = now()
            WHERE id = ${delivery.webhookId}`,
      )
      return reason
    })
    if (disabled) {
      this.log.warn({ webhookId: delivery.webhookId, reason: disabled }, 'webhook endpoint disabled')
      await this.onDisabled({
        userId: delivery.userId,
        webhookId: delivery.webhookId,
        url: delivery.url,
        reason: disabled,
      })
    }
  }

  /** The schedule's wait after attempt `attempt`, ±10 % so that endpoints failing together do not retry together. */
  private delayAfter(attempt: number, outcome: AttemptOutcome): number {
    const scheduled = this.settings.retryDelaysMs[attempt - 1] ?? 0
    const jittered = scheduled * (0.9 + Math.random() * 0.2)
    const asked = outcome.kind === 'answered' ? Math.min(outcome.retryAfterMs ?? 0, RETRY_AFTER_CAP_MS) : 0
    return Math.round(Math.max(jittered, asked))
  }
}
