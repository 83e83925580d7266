// RFC 9457 problem details: the one error shape of the API, and the error that carries it through handlers.
import { z } from 'zod'

/** Stable, documented error codes (docs/api.md). */
export type ProblemCode =
  | 'VALIDATION_FAILED'
  | 'MALFORMED_REQUEST'
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'REQUEST_TIMEOUT'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'EXPECTATION_FAILED'
  | 'METHOD_NOT_ALLOWED'
  | 'UNAUTHENTICATED'
  | 'REAUTHENTICATION_REQUIRED'
  | 'ACCOUNT_BLOCKED'
  | 'INVALID_CODE'
  | 'ANCHOR_NOT_FOUND'
  | 'NOT_FOUND'
  | 'ANCHOR_CONFLICT'
  | 'ANCHOR_NOT_CONFIRMED'
  | 'PDF_SIGNATURE_CONFLICT'
  | 'PDF_SIGNATURE_IN_PROGRESS'
  | 'PDF_SIGNATURE_REFUSED'
  | 'CERTIFICATE_NOT_YOURS'
  | 'CERTIFICATE_REVOKED'
  | 'CSR_INVALID'
  | 'EMAIL_NOT_VERIFIED'
  | 'PDF_SIGNATURE_TOO_LATE'
  | 'TIMESTAMP_UNAVAILABLE'
  | 'SIGNING_UNAVAILABLE'
  | 'LIBRARY_LIMIT_EXCEEDED'
  | 'WEBHOOK_URL_REFUSED'
  | 'WEBHOOK_LIMIT_REACHED'
  | 'PAYLOAD_TOO_LARGE'
  | 'PREVIOUS_NOT_FOUND'
  | 'CHAIN_TOO_DEEP'
  | 'RATE_LIMITED'
  | 'QUOTA_EXCEEDED'
  | 'INTERNAL_ERROR'
  | 'CHAIN_UNAVAILABLE'
  | 'NOT_READY'

export interface ProblemFieldError {
  path: string
  message: string
}

export interface ProblemBody {
  type: string
  title: string
  status: number
  detail: string
  code: ProblemCode
  errors?: ProblemFieldError[]
  [extension: string]: unknown
}

const TITLES: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  409: 'Conflict',
  413: 'Content Too Large',
  414: 'URI Too Long',
  415: 'Unsupported Media Type',
  417: 'Expectation Failed',
  422: 'Unprocessable Content',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  500: 'Internal Server Error',
  502: 'Bad Gateway',
  503: 'Service Unavailable',
}

/** Thrown anywhere a request must end with a problem; the error handler turns it into the response. */
export class ProblemError extends Error {
  override name = 'ProblemError'
  readonly status: number
  readonly code: ProblemCode
  readonly extensions: Record<string, unknown>
  readonly headers: Record<string, string>

  constructor(
    status: number,
    code: ProblemCode,
    detail: string,
    options: { extensions?: Record<string, unknown>; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause })
    this.status = status
    this.code = code
    this.extensions = options.extensions ?? {}
    this.headers = options.headers ?? {}
  }

  toBody(): ProblemBody {
    return problemBody(this.status, this.code, this.message, this.extensions)
  }
}

export function problemBody(
  status: number,
  code: ProblemCode,
  detail: string,
  extensions: Record<string, unknown> = {},
): ProblemBody {
  return { type: 'about:blank', title: TITLES[status] ?? 'Error', status, detail, code, ...extensions }
}

export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

/** The problem body as routes declare it in their response schemas (and so in the OpenAPI document). */
export const ProblemSchema = z.looseObject({
  type: z.string(),
  title: z.string(),
  status: z.number().int(),
  detail: z.string(),
  code: z.string(),
  errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
})
