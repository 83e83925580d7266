// Whether an error means the database could not be reached or is restarting, as opposed to a failing statement: the
// first is a passing outage a client should retry (503), the second a fault of the service (500). And the walk through
// an error's causes that such checks share.

/**
 * SQLSTATEs of a server going away or not yet accepting connections (class 08 is every connection exception), and of
 * a standby refusing a write (25006: a connection reached it in the seconds of a failover; the service itself never
 * opens a read-only transaction).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '25006'])
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'])
/**
 * node-postgres reports a dropped connection, a pool that could not connect, and a statement (a transaction's
 * ROLLBACK, say) on a client whose connection dropped, by message only.
 */
const UNAVAILABLE_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /^Client has encountered a connection error and is not queryable/,
]
const MAX_CAUSES = 5

/**
 * The database no longer holds what this request wrote a moment ago: it failed over to a standby that had not
 * received it. Like an outage, it passes (the relayer reconciles with the chain): the client repeats the request.
 */
export class DatabaseForgotError extends Error {
  override name = 'DatabaseForgotError'
}

export function isDatabaseUnavailable(error: unknown): boolean {
  return someCause(error, (current) => {
    if (current instanceof DatabaseForgotError) return true
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true
    if (typeof code === 'string' && UNAVAILABLE_SYSCALL_CODES.has(code)) return true
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true
    return UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(current.message))
  })
}

/** Whether the error or one of its first causes passes `test`: drivers' errors arrive wrapped (Drizzle's `cause`). */
export function someCause(error: unknown, test: (error: Error) => boolean): boolean {
  let current: unknown = error
  // A few links, never a cycle.
  for (let depth = 0; depth < MAX_CAUSES && current instanceof Error; depth++) {
    if (test(current)) return true
    current = current.cause
  }
  return false
}

/** Whether the error or one of its first causes carries the SQLSTATE `code`. */
export function hasSqlState(error: unknown, code: string): boolean {
  return someCause(error, (current) => (current as Error & { code?: string }).code === code)
}
