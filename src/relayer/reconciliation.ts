// When the relayer must reconcile with the chain before it anchors again: at start, after the database failed over
// (src/db/database-history.ts), when a key's nonce on chain passed what the database knows, when a nonce of ours was
// used by a transaction the database does not hold, and on an operator's command. Until it has, no relay reserves an
// anchor: a client repeating a relay the database forgot would otherwise anchor the same composite hash again.
import type { Address } from 'viem'
import type { ReconcileReport } from './actions/reconcile.ts'

export class Reconciliation {
  private required = true
  private reasons: string[] = ['start']
  /** Any run under way; `gating` too when relays wait for it (it was required). */
  private running: Promise<ReconcileReport> | undefined
  private gating: Promise<ReconcileReport> | undefined
  /**
   * Per key, the pending count the last run asked while transactions were still in the node's pool: once the chain's
   * latest count reaches it, they are mined and a follow-up (which relays do not wait for) looks at them.
   */
  private awaitingMined = new Map<Address, number>()
  /**
   * While a run left transactions in the pool: the first block after its head. Theirs are mined there or later, and
   * the runs that follow read from it, however far the database's last known anchor has moved on meanwhile.
   */
  private readFrom: number | undefined
  /** Runs that succeeded: the monitor acts on "looked up on chain" only once one has run since it looked. */
  private succeeded = 0

  constructor(
    private readonly reconcile: (options: { readFrom?: number }) => Promise<ReconcileReport>,
    private readonly onDone: (report: ReconcileReport, reasons: string[]) => void,
  ) {}

  /** Whether a relay must wait: a reconciliation is due, or one it must wait for is under way. */
  get due(): boolean {
    return this.required || this.gating !== undefined
  }

  /** The database may have forgotten transactions: relays wait until a reconciliation has looked. */
  require(reason: string): void {
    if (!this.reasons.includes(reason)) this.reasons.push(reason)
    this.required = true
  }

  /** Resolves once nothing is due, running the reconciliation (one at a time) if it is; rejects if it failed. */
  async settled(): Promise<void> {
    while (this.due) await (this.gating ?? this.run())
  }

  /** How many runs have succeeded so far. */
  get completed(): number {
    return this.succeeded
  }

  /**
   * Whether some key's transactions the last run left in the pool are mined now (`latest`: each key's latest count).
   * Any one key is enough: a transaction another key's pool dropped must not hold back reading what was mined.
   */
  followUpDue(latest: ReadonlyMap<Address, number>): boolean {
    return [...this.awaitingMined].some(([key, until]) => (latest.get(key) ?? 0) >= until)
  }

  /** Runs one now, or joins the one under way (the operator's command, a follow-up); answers its report. */
  run(): Promise<ReconcileReport> {
    if (this.running) return this.running
    // Whatever requires another one while this runs is seen by the next run: cleared before, not after.
    const gating = this.required
    const reasons = this.reasons
    this.reasons = []
    this.required = false
    const run = (async () => {
      try {
        const report = await this.reconcile({ readFrom: this.readFrom })
        this.awaitingMined = new Map(report.unmined.map(({ relayer, until }) => [relayer, until]))
        this.readFrom = report.unmined.length > 0 ? report.toBlock + 1 : undefined
        this.succeeded += 1
        this.onDone(report, reasons)
        return report
      } catch (error) {
        if (gating) this.required = true
        for (const reason of reasons) if (!this.reasons.includes(reason)) this.reasons.push(reason)
        throw error
      } finally {
        this.running = undefined
        this.gating = undefined
      }
    })()
    this.running = run
    if (gating) this.gating = run
    return run
  }
}
