// How long the webhooks' log is kept (WEBHOOK_LOG_RETENTION_DAYS, 30 days by default): attempts, deliveries that
// ended (delivered or failed: a replay reaches back as far) and countersignature e-mails sent or given up. Pending
// work is never removed, nor the events themselves (the feed and the account export read them). Removed in batches,
// so that no statement holds its locks for long, by whichever instance runs it first (the rows' own conditions make
// a second run find nothing).
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'
import { NOTICE_ATTEMPTS } from './countersign-notices.ts'

const BATCH = 5_000

export interface Pruned {
  attempts: number
  deliveries: number
  notices: number
}

export async function pruneWebhookLog(db: Database, retentionDays: number): Promise<Pruned> {
  const cutoff = sql`now() - ${retentionDays} * interval '1 day'`
  const drain = async (statement: () => ReturnType<typeof sql>) => {
    let total = 0
    for (;;) {
      const removed = (await rows(db, statement())).length
      total += removed
      if (removed < BATCH) return total
    }
  }
  return {
    attempts: await drain(
      () => sql`DELETE FROM webhook_attempts WHERE id IN (
                  SELECT id FROM webhook_attempts WHERE at < ${cutoff} ORDER BY at LIMIT ${BATCH})
                RETURNING id`,
    ),
    deliveries: await drain(
      () => sql`DELETE FROM webhook_deliveries WHERE id IN (
                  SELECT id FROM webhook_deliveries WHERE status <> 'pending' AND created_at < ${cutoff}
                  ORDER BY created_at LIMIT ${BATCH})
                RETURNING id`,
    ),
    notices: await drain(
      () => sql`DELETE FROM notice_emails WHERE event_seq IN (
                  SELECT n.event_seq FROM notice_emails n JOIN events e ON e.seq = n.event_seq
                  WHERE (n.sent_at IS NOT NULL OR n.attempts >= ${NOTICE_ATTEMPTS}) AND e.created_at < ${cutoff}
                  LIMIT ${BATCH})
                RETURNING event_seq`,
    ),
  }
}
