// The table from domain errors to problems (src/api/domain-problems.ts), for every code: the status, the problem
// code and the detail a client reads, written out here; a reason meant for the log never reaches the body, and rides
// as the cause of a 5xx instead, so the error handler's line says why.
import { describe, expect, it } from 'vitest'
import { domainProblem } from '../../src/api/domain-problems.ts'
import { ChainUnavailableError } from '../../src/chain/chain-errors.ts'
import { TooManyWebhooksError, WebhookUrlRefusedError } from '../../src/events/errors.ts'
import { LibraryLimitError } from '../../src/library/errors.ts'
import {
  CertificateRequestError,
  SignatureRefusedError,
  SigningKeyUnavailableError,
  TimestampUnavailableError,
} from '../../src/pdf-signing/errors.ts'
import {
  AnchorConflictError,
  PreviousNotFoundError,
  QuotaExceededError,
  UserGoneError,
} from '../../src/relayer/errors.ts'
import { AnchorNotFoundError, ChainTooDeepError } from '../../src/verify/errors.ts'

const TSA_REASON = 'no time-stamping authority answered (tsa.example: HTTP 500)'

describe('domainProblem', () => {
  const cases: [string, Error, { status: number; code: string; detail: string | RegExp }][] = [
    [
      'chain unavailable',
      new ChainUnavailableError(),
      { status: 502, code: 'CHAIN_UNAVAILABLE', detail: /unavailable/ },
    ],
    [
      'quota',
      new QuotaExceededError(3, 3, new Date(Date.now() + 60_000)),
      { status: 429, code: 'QUOTA_EXCEEDED', detail: /quota/ },
    ],
    ['conflict', new AnchorConflictError(), { status: 409, code: 'ANCHOR_CONFLICT', detail: /already anchored/ }],
    ['previous', new PreviousNotFoundError(), { status: 422, code: 'PREVIOUS_NOT_FOUND', detail: /previousTxHash/ }],
    ['user gone', new UserGoneError(), { status: 401, code: 'UNAUTHENTICATED', detail: /no longer exists/ }],
    [
      'not found',
      new AnchorNotFoundError('No anchor with this transaction hash'),
      { status: 404, code: 'ANCHOR_NOT_FOUND', detail: 'No anchor with this transaction hash' },
    ],
    [
      'too deep',
      new ChainTooDeepError('The chain is longer than 100 anchors'),
      { status: 422, code: 'CHAIN_TOO_DEEP', detail: 'The chain is longer than 100 anchors' },
    ],
    [
      'certificate request',
      new CertificateRequestError('the certificate request is not signed by its key'),
      { status: 422, code: 'CSR_INVALID', detail: 'the certificate request is not signed by its key' },
    ],
    [
      'signature refused',
      new SignatureRefusedError('its certificate names no e-mail'),
      {
        status: 422,
        code: 'PDF_SIGNATURE_REFUSED',
        detail: 'The PDF signature is refused: its certificate names no e-mail',
      },
    ],
    [
      'no timestamp',
      new TimestampUnavailableError(TSA_REASON),
      { status: 503, code: 'TIMESTAMP_UNAVAILABLE', detail: 'No time-stamping authority answered; try again later' },
    ],
    [
      'signing key',
      new SigningKeyUnavailableError(new Error('CKR_DEVICE_ERROR')),
      { status: 503, code: 'SIGNING_UNAVAILABLE', detail: 'The signing key is unavailable; try again later' },
    ],
    [
      'library limit',
      new LibraryLimitError([{ kind: 'signature', count: 51, limit: 50 }]),
      { status: 409, code: 'LIBRARY_LIMIT_EXCEEDED', detail: 'The sync would exceed the library item limit' },
    ],
    [
      'webhook URL refused',
      new WebhookUrlRefusedError('only https URLs'),
      { status: 400, code: 'WEBHOOK_URL_REFUSED', detail: 'The service may not deliver to this URL: only https URLs' },
    ],
    [
      'webhook limit',
      new TooManyWebhooksError('at most 10 webhooks per account'),
      { status: 409, code: 'WEBHOOK_LIMIT_REACHED', detail: 'at most 10 webhooks per account' },
    ],
  ]

  it.each(cases)('%s', (_name, error, expected) => {
    const { problem } = domainProblem(error)!
    expect(problem.status).toBe(expected.status)
    expect(problem.code).toBe(expected.code)
    if (typeof expected.detail === 'string') expect(problem.message).toBe(expected.detail)
    else expect(problem.message).toMatch(expected.detail)
  })

  it('keeps a reason meant for the log out of the body, as the cause of the 5xx', () => {
    const error = new TimestampUnavailableError(TSA_REASON)
    const { problem } = domainProblem(error)!
    expect(JSON.stringify(problem.toBody())).not.toContain('tsa.example')
    expect(problem.cause).toBe(error)
    expect(domainProblem(new ChainUnavailableError('http://key@node'))!.problem.cause).toBeUndefined()
  })

  it('lists the library limit per kind as field errors', () => {
    const { problem } = domainProblem(new LibraryLimitError([{ kind: 'snippet', count: 201, limit: 200 }]))!
    expect(problem.toBody()).toMatchObject({
      errors: [{ path: 'snippets.upsert', message: 'the library would hold 201 snippets; at most 200 allowed' }],
    })
  })

  it('answers nothing for an error no domain names', () => {
    expect(domainProblem(new Error('anything'))).toBeUndefined()
  })
})
