// Errors of the API client. A non-2xx answer is an AnchorApiError carrying the RFC 9457 problem body's fields; a
// request that got no answer (unreachable, timed out) is an AnchorNetworkError; a relay not confirmed by the
// caller's deadline (or failed) is an AnchorNotConfirmedError. An abort by the caller's own AbortSignal is rethrown as it is.

export interface ProblemFieldError {
  /** The field, e.g. `compositeHash` or `signatures.upsert`. */
  path: string
  message: string
}

export class AnchorApiError extends Error {
  /** HTTP status of the answer. */
  readonly status: number
  /** The problem's stable `code` (e.g. `INVALID_CODE`, `RATE_LIMITED`), or `HTTP_<status>` when the body has none. */
  readonly code: string
  /** The problem's human-readable `detail`, or the status text. */
  readonly detail: string
  /** Per-field validation errors (400 `VALIDATION_FAILED`, 409 `LIBRARY_LIMIT_EXCEEDED`). */
  readonly errors: ProblemFieldError[]
  /** Seconds from the `Retry-After` header (429, 503), when present. */
  readonly retryAfter: number | undefined
  /** The whole problem body, for extension members such as `limit`, `used` and `resetsAt` of `QUOTA_EXCEEDED`. */
  readonly problem: Readonly<Record<string, unknown>>

  constructor(status: number, problem: Record<string, unknown>, retryAfter: number | undefined) {
    const code = typeof problem.code === 'string' ? problem.code : `HTTP_${status}`
    const detail = typeof problem.detail === 'string' ? problem.detail : `the service answered ${status}`
    super(`${status} ${code}: ${detail}`)
    this.name = 'AnchorApiError'
    this.status = status
    this.code = code
    this.detail = detail
    this.errors = Array.isArray(problem.errors) ? problem.errors.filter(isFieldError) : []
    this.retryAfter = retryAfter
    this.problem = problem
  }
}

export class AnchorNetworkError extends Error {
  /** `timeout` when the client's own time limit ran out, `unreachable` when fetch failed. */
  readonly reason: 'timeout' | 'unreachable'

  constructor(reason: 'timeout' | 'unreachable', url: string, options?: { cause?: unknown }) {
    super(reason === 'timeout' ? `no answer from ${url} in time` : `cannot reach ${url}`, options)
    this.name = 'AnchorNetworkError'
    this.reason = reason
  }
}

export class AnchorNotConfirmedError extends Error {
  /** `pending` when the deadline passed first; `failed` when the service reports the transaction failed. */
  readonly state: 'pending' | 'failed'
  /** Provisional: a stuck transaction may be replaced by one with another hash. Never put it in a QR code. */
  readonly txHash: string
  readonly compositeHash: string

  constructor(state: 'pending' | 'failed', txHash: string, compositeHash: string) {
    super(`the anchor of ${compositeHash} is ${state}, not confirmed; relay the same request again later`)
    this.name = 'AnchorNotConfirmedError'
    this.state = state
    this.txHash = txHash
    this.compositeHash = compositeHash
  }
}

function isFieldError(value: unknown): value is ProblemFieldError {
  if (typeof value !== 'object' || value === null) return false
  const { path, message } = value as Record<string, unknown>
  return typeof path === 'string' && typeof message === 'string'
}

/** `Retry-After` in seconds: delta-seconds or an HTTP date; undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now = Date.now()): number | undefined {
  if (header === null) return undefined
  if (/^\d+$/.test(header.trim())) return Number(header.trim())
  const date = Date.parse(header)
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - now) / 1000))
}
