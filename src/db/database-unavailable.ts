// Whether an error means the database could not be reached or is restarting, as opposed to a failing statement: the
// first is a passing outage a client should retry (503), the second a fault of the service (500).

/** SQLSTATEs of a server going away or not yet accepting connections; class 08 is every connection exception. */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03'])
const UNAVAILABLE_SYSCALL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH'])
/** node-postgres reports a dropped connection and a pool that could not connect by message only. */
const UNAVAILABLE_MESSAGES = [/^Connection terminated/, /timeout exceeded when trying to connect/]
const MAX_CAUSES = 5

export function isDatabaseUnavailable(error: unknown): boolean {
  let current: unknown = error
  // Drizzle wraps the driver's error as `cause`; follow a few links, never a cycle.
  for (let depth = 0; depth < MAX_CAUSES && current instanceof Error; depth++) {
    const code = (current as { code?: unknown }).code
    if (typeof code === 'string' && (code.startsWith('08') || UNAVAILABLE_SQLSTATES.has(code))) return true
    if (typeof code === 'string' && UNAVAILABLE_SYSCALL_CODES.has(code)) return true
    if (current instanceof AggregateError && current.errors.some(isDatabaseUnavailable)) return true
    if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(current instanceof Error ? current.message : '')))
      return true
    current = current.cause
  }
  return false
}
