// Delivers the webhook deliveries that are due, from the database, so that any instance picks up what another left:
// at most one attempt per endpoint at a time, and a few endpoints at once, so a slow receiver cannot hold the workers.
// Each round takes a batch of an endpoint's due deliveries, sends them in order and records them in one transaction.
// An attempt is leased (leased_until): an instance that dies mid-attempt leaves it to be tried again once the lease ends,
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

/** Endpoints served at once: one attempt under way per endpoint, so a slow receiver holds only its own deliveries. */
const CONCURRENCY = 8
/** Deliveries of one endpoint taken in one round, sent one after another (a failure ends its round). */
const BATCH = 16
/**
 * No attempt starts later than this into its round (the rest go back for the next one), so that a round, and the
 * lease of an instance that died in it, ends soon: what it held is tried again within a minute, not minutes.
 */
const ROUND_MS = 15_000
/** A lease outlasts its round's last attempt by this much. */
const LEASE_MARGIN_MS = 10_000
/** The longest a Retry-After may push the next attempt: the schedule's own longest wait. */
const RETRY_AFTER_CAP_MS = 10 * 60 * 60 * 1000
/** How long the signing key is used before the database is asked again (a new key reaches every instance). */
const KEY_TTL_MS = 5 * 60 * 1000

export interface DispatcherLogger {
  warn(object: object, message: string): void
}

export interface DisabledEndpoint {
  userId: string
  webhookId: string
  url: string
  reason: 'gone' | 'failing'
}

interface Attempted {
  delivery: Claimed
  outcome: AttemptOutcome
  durationMs: number
  delivered: boolean
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

  /** Attempts every delivery due now, round after round; how many it attempted. */
  tick(): Promise<number> {
    this.running ??= this.dispatch().finally(() => {
      this.running = undefined
    })
    return this.running
  }
  private async dispatch(): Promise<number> {
    let attempted = 0
    // Until nothing is due: a backlog drains at the receivers' pace, not one round per interval.
    while (!this.stopped) {
      const claimed = await this.claim()
      if (claimed.length === 0) break
      const key = await this.signingKey()
      const rounds = new Map<string, Claimed[]>()
      for (const delivery of claimed)
        rounds.set(delivery.webhookId, [...(rounds.get(delivery.webhookId) ?? []), delivery])
      const counts = await Promise.all([...rounds.values()].map((round) => this.deliverRound(round, key)))
      attempted += counts.reduce((sum, count) => sum + count, 0)
    }
    return attempted
  }

  /**
   * Up to CONCURRENCY endpoints (those waiting longest first) and up to BATCH due deliveries of each, leased. The row's
   * WHERE is checked again under its lock: of two instances choosing the same delivery, one takes it.
   */
  private async claim(): Promise<Claimed[]> {
    const leaseMs = ROUND_MS + this.settings.timeoutMs + LEASE_MARGIN_MS
    const found = await rows(
      this.db,
      sql`WITH endpoints AS (
            SELECT d.webhook_id FROM webhook_deliveries d
            JOIN webhooks w ON w.id = d.webhook_id AND w.status = 'enabled'
            WHERE d.status = 'pending' AND d.next_attempt_at <= now()
              AND (d.leased_until IS NULL OR d.leased_until < now())
              AND NOT EXISTS (SELECT 1 FROM webhook_deliveries x
                              WHERE x.webhook_id = d.webhook_id AND x.status = 'pending' AND x.leased_until > now())
            GROUP BY d.webhook_id ORDER BY min(d.next_attempt_at) LIMIT ${CONCURRENCY}
          ),
          due AS (
            SELECT chosen.id FROM endpoints e CROSS JOIN LATERAL (
              SELECT d.id FROM webhook_deliveries d
              WHERE d.webhook_id = e.webhook_id AND d.status = 'pending' AND d.next_attempt_at <= now()
                AND (d.leased_until IS NULL OR d.leased_until < now())
              ORDER BY d.next_attempt_at, d.event_seq LIMIT ${BATCH}
            ) chosen
          ),
          leased AS (
            UPDATE webhook_deliveries d SET leased_until = now() + ${leaseMs} * interval '1 millisecond'
            FROM due WHERE d.id = due.id AND d.status = 'pending' AND (d.leased_until IS NULL OR d.leased_until < now())
            RETURNING d.id, d.attempts, d.webhook_id, d.event_seq
          )
          SELECT l.id, l.attempts + 1 AS attempt, w.id AS webhook_id, w.user_id, w.url, w.secret,
                 CASE WHEN w.previous_secret_until > now() THEN w.previous_secret END AS previous_secret,
                 e.id AS event_id, e.type, e.created_at, e.data
          FROM leased l JOIN webhooks w ON w.id = l.webhook_id JOIN events e ON e.seq = l.event_seq
          ORDER BY l.event_seq`,
    )
    return found.map((r) => ({
      deliveryId: String(r.id),
      attempt: Number(r.attempt),
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

  /** One endpoint's round: its deliveries in order until one fails; how many were attempted. */
  private async deliverRound(round: Claimed[], signingKey: KeyObject): Promise<number> {
    const results: Attempted[] = []
    const started = performance.now()
    for (const delivery of round) {
      if (this.stopped || performance.now() - started > ROUND_MS) break
      const result = await this.attempt(delivery, signingKey)
      results.push(result)
      if (!result.delivered) break
    }
    await this.record(round, results)
    return results.length
  }

  private async attempt(delivery: Claimed, signingKey: KeyObject): Promise<Attempted> {
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
    const delivered = outcome.kind === 'answered' && outcome.status >= 200 && outcome.status < 300
    return { delivery, outcome, durationMs, delivered }
  }

  /**
   * A round's attempts in one transaction: every attempt logged, the delivered ones done, the failed one (the last, if
   * any) scheduled again or given up, the ones not reached released for the next round; the endpoint disabled when it
   * answered 410 or has failed for too long.
   */
  private async record(round: Claimed[], results: Attempted[]): Promise<void> {
    const { webhookId, userId, url } = round[0]!
    const idList = (ids: string[]) =>
      sql.join(
        ids.map((id) => sql`${id}`),
        sql`, `,
      )
    const delivered = results.filter((result) => result.delivered).map((result) => result.delivery.deliveryId)
    const failed = results.find((result) => !result.delivered)
    const unreached = round.slice(results.length).map((delivery) => delivery.deliveryId)
    const disabled = await this.db.transaction(async (tx) => {
      if (results.length > 0) {
        const values = results.map(
          ({ delivery, outcome, durationMs }) =>
            sql`(${webhookId}, ${delivery.eventId}, ${delivery.type}, ${delivery.attempt},
                 ${outcome.kind === 'answered' ? String(outcome.status) : outcome.kind}, ${durationMs}, ${outcome.response})`,
        )
        await tx.execute(
          sql`INSERT INTO webhook_attempts (webhook_id, event_id, event_type, attempt, status, duration_ms, response)
              VALUES ${sql.join(values, sql`, `)}`,
        )
      }
      if (delivered.length > 0) {
        await tx.execute(
          sql`UPDATE webhook_deliveries SET status = 'delivered', attempts = attempts + 1, leased_until = NULL
              WHERE id IN (${idList(delivered)})`,
        )
        await tx.execute(
          sql`UPDATE webhooks SET failing_since = NULL WHERE id = ${webhookId} AND failing_since IS NOT NULL`,
        )
      }
      if (unreached.length > 0) {
        await tx.execute(sql`UPDATE webhook_deliveries SET leased_until = NULL WHERE id IN (${idList(unreached)})`)
      }
      if (!failed) return undefined
      const { outcome, delivery } = failed
      const gone = outcome.kind === 'answered' && outcome.status === 410
      const exhausted = delivery.attempt > this.settings.retryDelaysMs.length
      const nextInMs = gone || exhausted ? 0 : this.delayAfter(delivery.attempt, outcome)
      await tx.execute(
        sql`UPDATE webhook_deliveries
            SET status = ${gone || exhausted ? 'failed' : 'pending'}, attempts = attempts + 1, leased_until = NULL,
                next_attempt_at = now() + ${nextInMs} * interval '1 millisecond'
            WHERE id = ${delivery.deliveryId}`,
      )
      const [hook] = await rows(
        tx,
        sql`UPDATE webhooks SET failing_since = COALESCE(failing_since, now()) WHERE id = ${webhookId}
            RETURNING status, failing_since < now() - ${this.settings.disableAfterMs} * interval '1 millisecond' AS stale`,
      )
      const reason = gone ? 'gone' : hook?.stale === true ? 'failing' : undefined
      if (!reason || hook?.status !== 'enabled') return undefined
      await tx.execute(
        sql`UPDATE webhooks SET status = 'disabled', disabled_reason = ${reason}, updated_at = now()
            WHERE id = ${webhookId}`,
      )
      return reason
    })
    if (disabled) {
      this.log.warn({ webhookId, reason: disabled }, 'webhook endpoint disabled')
      await this.onDisabled({ userId, webhookId, url, reason: disabled })
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
