// Which history of the database a PostgreSQL connection writes to: the cluster's system identifier and its WAL
// timeline. A standby promoted after a failover starts a new timeline, a different cluster has another identifier;
// either way commits acknowledged before may be missing (an asynchronous standby had not received them), and the
// relayer reconciles with the chain before it anchors again (src/relayer/reconciliation.ts).
import type pg from 'pg'

/** Readable by any role; pg_walfile_name names the current WAL file, whose first 8 hex digits are the timeline. */
const IDENTITY_SQL = `SELECT system_identifier::text || '/' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8)
  AS history FROM pg_control_system()`

type ConnectCallback = ((err: Error) => void) | ((err: null, client: pg.Client) => void)

export class DatabaseHistory {
  private known: string | undefined
  private readonly listeners: ((change: { from: string; to: string }) => void)[] = []

  onChange(listener: (change: { from: string; to: string }) => void): void {
    this.listeners.push(listener)
  }

  /**
   * The pool's client class, reading the history of each new connection before the pool hands it out: the
   * listeners hear of a failover before the first statement on the new primary answers. A connection to a standby
   * (which cannot write, and cannot name its WAL file) is not read.
   */
  clientClass(base: typeof pg.Client): typeof pg.Client {
    const history = this
    return class ClientReadingHistory extends base {
      override connect(): Promise<pg.Client>
      override connect(callback: ConnectCallback): void
      override connect(callback?: ConnectCallback): Promise<pg.Client> | undefined {
        const connected = super.connect().then(async () => {
          // The pool listens for this client's errors only once connect answers: a connection cut while the
          // history is read would otherwise raise an uncaught 'error'. Cut, it fails the connect instead.
          let cut: Error | undefined
          const noteCut = (error: Error) => {
            cut = error
          }
          this.on('error', noteCut)
          try {
            await this.query<{ history: string }>(IDENTITY_SQL).then(
              ({ rows }) => history.observe(rows[0]!.history),
              () => {},
            )
          } finally {
            this.off('error', noteCut)
          }
          if (cut) throw cut
          return this as pg.Client
        })
        if (!callback) return connected
        const done = callback as (err: Error | null, client?: pg.Client) => void
        connected.then(
          (client) => done(null, client),
          (error: Error) => done(error),
        )
        return undefined
      }
    }
  }

  private observe(history: string): void {
    const from = this.known
    this.known = history
    if (from === undefined || from === history) return
    for (const listener of this.listeners) listener({ from, to: history })
  }
}
