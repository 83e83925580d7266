// Sends the e-mails of countersignatures to the accounts that opted in (users.notify_countersigned). Each is a row of
// notice_emails, created with its `anchor.countersigned` event (the trigger on `events`), so none is lost by a crash
// or invented by a reorg. Any instance sends what is due: a row is leased while it is sent, as a webhook delivery is,
// and a round starts no send after a minute, so that no lease runs out under way; an instance that dies between the
// mail server's acceptance and the row's update leaves it to be sent again (the one way an e-mail arrives twice). A
// mail server that refuses is tried again a few times, then given up.
import { txHashToBase64Url } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'

/** Minutes before each retry after a failed send; its length is how often a notice is tried again. */
const RETRY_MINUTES = [1, 10, 60, 360]
/** Sends a notice is given, the first included: one given up has made this many. */
export const NOTICE_ATTEMPTS = RETRY_MINUTES.length + 1
/** Notices taken in one round. */
const BATCH = 20
/** No send starts later than this into its round: the notices not reached go back, so that none outlives its lease. */
const ROUND_MS = 60_000
/** A lease outlasts its round's last send, however slow the mail server (nodemailer gives up within 10 minutes). */
const LEASE_MS = ROUND_MS + 15 * 60 * 1000

export interface NoticeLogger {
  warn(object: object, message: string): void
}

/** Delivers one e-mail; false when the mail server did not take it. */
export type SendNotice = (to: string, subject: string, text: string) => Promise<boolean>

interface DueNotice {
  eventSeq: number
  attempt: number
  email: string
  optedIn: boolean
  data: {
    txHash: string
    blockNumber: number | null
    countersignature: { txHash: string; blockNumber: number | null }
  }
  createdAt: Date
}

export class CountersignNotices {
  private stopped = false

  constructor(
    private readonly db: Database,
    private readonly send: SendNotice,
    /** Where the e-mail's links point: the verification page's base (VERIFY_BASE_URL). */
    private readonly verifyBaseUrl: string,
    private readonly log: NoticeLogger,
  ) {}

  /** Sends every notice due now, a round at a time, until stopped; how many it sent. */
  async tick(): Promise<number> {
    let sent = 0
    while (!this.stopped) {
      const due = await this.claim()
      if (due.length === 0) break
      const started = performance.now()
      for (const [index, notice] of due.entries()) {
        if (this.stopped || performance.now() - started > ROUND_MS) {
          await this.release(due.slice(index))
          return sent
        }
        if (await this.deliver(notice)) sent += 1
      }
    }
    return sent
  }

  /** Ends the round under way after its current send (the app closing). */
  stop(): void {
    this.stopped = true
  }

  /** Hands notices not reached back, for the next round of any instance. */
  private async release(notices: DueNotice[]): Promise<void> {
    if (notices.length === 0) return
    const seqs = sql.join(
      notices.map((notice) => sql`${notice.eventSeq}`),
      sql`, `,
    )
    await this.db.execute(sql`UPDATE notice_emails SET leased_until = NULL WHERE event_seq IN (${seqs})`)
  }

  /** Up to BATCH due notices, leased; of two instances choosing the same one, one takes it (SKIP LOCKED). */
  private async claim(): Promise<DueNotice[]> {
    const found = await rows(
      this.db,
      sql`WITH due AS (
            SELECT event_seq FROM notice_emails
            WHERE sent_at IS NULL AND attempts < ${NOTICE_ATTEMPTS} AND next_attempt_at <= now()
              AND (leased_until IS NULL OR leased_until < now())
            ORDER BY next_attempt_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED
          ),
          leased AS (
            UPDATE notice_emails n SET leased_until = now() + ${LEASE_MS} * interval '1 millisecond'
            FROM due WHERE n.event_seq = due.event_seq
            RETURNING n.event_seq, n.attempts, n.user_id
          )
          SELECT l.event_seq, l.attempts + 1 AS attempt, u.email, u.notify_countersigned, e.data, e.created_at
          FROM leased l JOIN users u ON u.id = l.user_id JOIN events e ON e.seq = l.event_seq
          ORDER BY l.event_seq`,
    )
    return found.map((r) => ({
      eventSeq: Number(r.event_seq),
      attempt: Number(r.attempt),
      email: String(r.email),
      optedIn: r.notify_countersigned === true,
      data: (typeof r.data === 'string' ? JSON.parse(r.data) : r.data) as DueNotice['data'],
      createdAt: new Date(r.created_at as string),
    }))
  }

  /** Sends one notice and records the outcome; whether the mail server took it. */
  private async deliver(notice: DueNotice): Promise<boolean> {
    // Opted out since the countersignature: nothing is sent, and nothing is left to send.
    if (!notice.optedIn) {
      await this.db.execute(sql`DELETE FROM notice_emails WHERE event_seq = ${notice.eventSeq}`)
      return false
    }
    const sent = await this.send(notice.email, 'Someone signed after you', this.text(notice)).catch(() => false)
    if (sent) {
      await this.db.execute(
        sql`UPDATE notice_emails SET sent_at = now(), attempts = attempts + 1, leased_until = NULL
            WHERE event_seq = ${notice.eventSeq}`,
      )
      return true
    }
    const retryInMinutes = RETRY_MINUTES[notice.attempt - 1]
    if (retryInMinutes === undefined) this.log.warn({ eventSeq: notice.eventSeq }, 'a countersign notice was given up')
    await this.db.execute(
      sql`UPDATE notice_emails SET attempts = attempts + 1, leased_until = NULL,
            next_attempt_at = now() + ${retryInMinutes ?? 0} * interval '1 minute'
          WHERE event_seq = ${notice.eventSeq}`,
    )
    return false
  }

  /** The e-mail: which of the account's anchors was countersigned, by which transaction, and where to check both. */
  private text({ data, createdAt }: DueNotice): string {
    const page = (txHash: string) => `${this.verifyBaseUrl}/v/${txHashToBase64Url(txHash)}`
    const block = (blockNumber: number | null) => (blockNumber === null ? '' : ` (block ${blockNumber})`)
    return (
      `A document you signed was signed again after you, on ${createdAt.toISOString().slice(0, 16).replace('T', ' ')} UTC.\n\n` +
      `Your signature:      ${data.txHash}${block(data.blockNumber)}\n` +
      `The one after yours: ${data.countersignature.txHash}${block(data.countersignature.blockNumber)}\n\n` +
      `The chain of signatures: ${page(data.countersignature.txHash)}\n` +
      '(the signer’s details open only with the link in the QR code on the signed PDF).\n\n' +
      'You get this e-mail because you asked to be told of countersignatures; turn it off with ' +
      '`anchor account notifications --countersigned off` or PUT /api/account/notifications.\n'
    )
  }
}
