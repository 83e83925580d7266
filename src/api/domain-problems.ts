// The one table from domain error codes to HTTP: status, problem code (the title follows the status), what the body
// carries besides the error's message, and the failure's label on the domain's outcome metric. Routes look errors up
// here instead of keeping instanceof ladders of their own.
import { ChainError, type ChainErrorType } from '../chain/chain-errors.ts'
import { WebhookError, type WebhookErrorType } from '../events/errors.ts'
import { LibraryError, type LibraryErrorType } from '../library/errors.ts'
import { PdfSigningError, type PdfSigningErrorType } from '../pdf-signing/errors.ts'
import { RelayError, type RelayErrorType } from '../relayer/errors.ts'
import type { RelayOutcomeLabel } from '../relayer/relay-metrics.ts'
import { VerifyError, type VerifyErrorType } from '../verify/errors.ts'
import { type ProblemCode, ProblemError } from './problem.ts'

type DomainErrorType =
  | ChainErrorType
  | RelayErrorType
  | VerifyErrorType
  | PdfSigningErrorType
  | LibraryErrorType
  | WebhookErrorType
type DomainErrorCode = DomainErrorType['code']

interface ProblemMapping<E extends DomainErrorType> {
  status: number
  problem: ProblemCode
  /** The label of relay_outcomes_total for a relay that ended with this error (none for errors a relay cannot end with). */
  outcome?: RelayOutcomeLabel
  /** Extensions and headers the problem carries besides the error's message. */
  extras?: (error: E) => { extensions?: Record<string, unknown>; headers?: Record<string, string> }
  /** The problem's detail, when the error's message is not it (a reason meant for the log, say). */
  detail?: (error: E) => string
  /** The error rides along as the problem's cause, so the 5xx log line says why; its message is never answered. */
  logCause?: true
}

const DOMAIN_PROBLEMS: { [C in DomainErrorCode]: ProblemMapping<Extract<DomainErrorType, { code: C }>> } = {
  // Chain (src/chain/chain-errors.ts). No cause attached: the node's error text can carry the RPC URL, and with it a
  // provider's API key.
  ERR_CHAIN_UNAVAILABLE: { status: 502, problem: 'CHAIN_UNAVAILABLE', outcome: 'chain_unavailable' },

  // Relay (src/relayer/errors.ts)
  ERR_QUOTA_EXCEEDED: {
    status: 429,
    problem: 'QUOTA_EXCEEDED',
    outcome: 'quota_exceeded',
    extras: (error) => ({
      extensions: { limit: error.limit, used: error.used, resetsAt: error.resetsAt.toISOString() },
      headers: { 'retry-after': String(Math.max(1, Math.ceil((error.resetsAt.getTime() - Date.now()) / 1000))) },
    }),
  },
  ERR_ANCHOR_CONFLICT: { status: 409, problem: 'ANCHOR_CONFLICT', outcome: 'conflict' },
  ERR_PREVIOUS_NOT_FOUND: { status: 422, problem: 'PREVIOUS_NOT_FOUND', outcome: 'previous_not_found' },
  ERR_USER_GONE: {
    status: 401,
    problem: 'UNAUTHENTICATED',
    outcome: 'user_gone',
    extras: () => ({ headers: { 'www-authenticate': 'Bearer' } }),
  },

  // Verify (src/verify/errors.ts)
  ERR_ANCHOR_NOT_FOUND: { status: 404, problem: 'ANCHOR_NOT_FOUND' },
  ERR_CHAIN_TOO_DEEP: { status: 422, problem: 'CHAIN_TOO_DEEP' },

  // PDF signing (src/pdf-signing/errors.ts)
  ERR_CSR_INVALID: { status: 422, problem: 'CSR_INVALID' },
  ERR_SIGNATURE_REFUSED: {
    status: 422,
    problem: 'PDF_SIGNATURE_REFUSED',
    detail: (error) => `The PDF signature is refused: ${error.message}`,
  },
  ERR_TIMESTAMP_UNAVAILABLE: {
    status: 503,
    problem: 'TIMESTAMP_UNAVAILABLE',
    detail: () => 'No time-stamping authority answered; try again later',
    logCause: true,
  },
  ERR_SIGNING_KEY_UNAVAILABLE: {
    status: 503,
    problem: 'SIGNING_UNAVAILABLE',
    detail: () => 'The signing key is unavailable; try again later',
    logCause: true,
  },

  // Library (src/library/errors.ts)
  ERR_LIBRARY_LIMIT: {
    status: 409,
    problem: 'LIBRARY_LIMIT_EXCEEDED',
    detail: () => 'The sync would exceed the library item limit',
    extras: (error) => ({
      extensions: {
        errors: error.violations.map(({ kind, count, limit }) => ({
          path: `${kind}s.upsert`,
          message: `the library would hold ${count} ${kind}s; at most ${limit} allowed`,
        })),
      },
    }),
  },

  // Webhooks (src/events/errors.ts)
  ERR_WEBHOOK_URL_REFUSED: {
    status: 400,
    problem: 'WEBHOOK_URL_REFUSED',
    detail: (error) => `The service may not deliver to this URL: ${error.message}`,
  },
  ERR_WEBHOOK_LIMIT: { status: 409, problem: 'WEBHOOK_LIMIT_REACHED' },
}

const DOMAIN_ERROR_BASES = [ChainError, RelayError, VerifyError, PdfSigningError, LibraryError, WebhookError]

export interface DomainProblem {
  problem: ProblemError
  outcome: RelayOutcomeLabel | undefined
}

/**
 * The problem and metric label of a domain error; undefined for any other error (the error handler answers it).
 * `headers`: what the route adds to the answer (a cache lifetime, say).
 */
export function domainProblem(error: unknown, headers: Record<string, string> = {}): DomainProblem | undefined {
  if (!DOMAIN_ERROR_BASES.some((base) => error instanceof base)) return undefined
  const known = error as DomainErrorType
  // The table pairs each code with its own class; indexing by a union of codes cannot show that to the compiler.
  const mapping = DOMAIN_PROBLEMS[known.code] as ProblemMapping<DomainErrorType>
  const extras = mapping.extras?.(known)
  const problem = new ProblemError(mapping.status, mapping.problem, mapping.detail?.(known) ?? known.message, {
    ...extras,
    headers: { ...extras?.headers, ...headers },
    ...(mapping.logCause ? { cause: known } : {}),
  })
  return { problem, outcome: mapping.outcome }
}
