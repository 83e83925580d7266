// The typed client of the service's HTTP API: sign-in, session, info, relay, anchors, verify and the cloud library.
// Every 2xx body is parsed with the schemas the suite checks against /openapi.json; every other answer throws an
// AnchorApiError. Web APIs only (fetch, AbortSignal, WebCrypto), so it runs in Node, browsers and Electron.

import { z } from 'zod'
import { fromBase64, toBase64 } from '../formats/base64.ts'
import { toHex } from '../formats/hex.ts'
import { AnchorApiError, AnchorNetworkError, AnchorNotConfirmedError, parseRetryAfter } from './anchor-api-error.ts'
import {
  type AccountExport,
  AccountExportSchema,
  type AnchorPage,
  AnchorPageSchema,
  type AnchorState,
  AnchorStateSchema,
  CodeSentSchema,
  type CreatedWebhook,
  CreatedWebhookSchema,
  DocumentTimestampSchema,
  type EventPage,
  EventPageSchema,
  type ExchangeBody,
  InfoSchema,
  type Library,
  LibrarySchema,
  type LibraryStatus,
  LibraryStatusSchema,
  type LibrarySyncBody,
  type LibrarySyncResult,
  LibrarySyncResultSchema,
  type Me,
  MeSchema,
  type Notifications,
  NotificationsSchema,
  type PdfSignatureResult,
  PdfSignatureSchema,
  type RelayBody,
  type RelayResult,
  RelaySchema,
  type RequestCodeBody,
  type ServiceInfo,
  type SignerCertificateResult,
  SignerCertificateSchema,
  type SignInResult,
  SignInSchema,
  type SuccessorPage,
  SuccessorPageSchema,
  type VerifyCodeBody,
  type VerifyResult,
  VerifySchema,
  type WebhookAttemptPage,
  WebhookAttemptPageSchema,
  type WebhookEndpoint,
  WebhookSchema,
} from './api-schemas.ts'

export interface AnchorClientOptions {
  /** The service's base URL, e.g. `https://anchor.example.com` (a trailing slash is ignored). */
  baseUrl: string
  /** A session token from verifyCode or exchange, sent as `Authorization: Bearer`. */
  token?: string
  /** Default: the global fetch. */
  fetch?: typeof fetch
  /** Time limit of each request attempt; default 30 s. */
  timeoutMs?: number
  /** How often a 429, 502 or 503 answer is retried; default 0 (the error is thrown at once). */
  retries?: number
  /** First retry delay, doubled each time; default 500 ms. A `Retry-After` header takes precedence. */
  retryDelayMs?: number
  /** Longest wait between retries; an answer asking for longer (`Retry-After`) is thrown instead. Default 30 s. */
  maxRetryDelayMs?: number
}

export interface CallOptions {
  /** Aborts the call, retries and waiting included; the abort reason is thrown as it is. */
  signal?: AbortSignal
}

export interface RelayOptions extends CallOptions {
  /**
   * How long to wait for a pending (202) anchor to be confirmed, polling `GET /api/anchors/:compositeHash` with
   * backoff. 0 (the default) returns the 202 answer as it is; past the deadline an AnchorNotConfirmedError is thrown.
   */
  waitMs?: number
  /** First poll delay, growing 1.5× per poll up to 10 s; default 1 s. */
  pollIntervalMs?: number
}

export type OAuthProvider = 'google' | 'microsoft'

export interface AnchorClient {
  readonly baseUrl: string
  /** A client like this one that sends `token`. */
  withToken(token: string | undefined): AnchorClient
  /** Sends a 6-digit sign-in code to `email` (the same answer whether or not the address has an account). */
  requestCode(email: string, options?: CallOptions): Promise<void>
  /** Exchanges an e-mailed code for a session; 401 `INVALID_CODE` when wrong, used or expired. */
  verifyCode(email: string, code: string, options?: CallOptions): Promise<SignInResult>
  /** Where to send the user to sign in with a provider; its callback carries a code for `exchange`. */
  oauthSignInUrl(provider: OAuthProvider, codeChallenge: string): string
  /** Exchanges the one-time code of an OAuth callback, with the PKCE verifier, for a session. */
  exchange(code: string, codeVerifier: string, options?: CallOptions): Promise<SignInResult>
  me(options?: CallOptions): Promise<Me>
  /** Revokes the session: the token stops working at once. */
  logout(options?: CallOptions): Promise<void>
  info(options?: CallOptions): Promise<ServiceInfo>
  /** Anchors a composite hash; idempotent, so repeating the same request is safe. */
  relay(body: RelayBody, options?: RelayOptions): Promise<RelayResult>
  /**
   * A certificate of the service's CA for the signer's own key, naming the account's verified e-mail: `csr` is a
   * PKCS#10 request (`certificationRequest`), DER.
   */
  signerCertificate(csr: Uint8Array, options?: CallOptions): Promise<SignerCertificateResult>
  /**
   * The PDF signature `cms` (made with the signer's key and certificate for one of the user's confirmed anchors, its
   * signed attributes naming it: `anchoredSignatureCms`) with the service's timestamp added: signPdf's
   * `pdfSignature`, with `pdfSignatureCms`. The same request again answers the same.
   */
  pdfSignature(body: { txHash: string; cms: Uint8Array }, options?: CallOptions): Promise<PdfSignatureResult>
  /**
   * An RFC 3161 timestamp token (DER) over `digest`, the SHA-256 of a PDF's byte range: the document timestamp of
   * long-term validation (addLongTermValidation's `documentTimestamp`).
   */
  documentTimestamp(digest: Uint8Array, options?: CallOptions): Promise<Uint8Array>
  /** The state of one of the user's own anchors. */
  anchor(compositeHash: string, options?: CallOptions): Promise<AnchorState>
  /** A page of the user's anchors, newest first; `cursor` is the previous page's `nextCursor`. */
  anchors(page?: { cursor?: string; limit?: number }, options?: CallOptions): Promise<AnchorPage>
  /** The user's events, oldest first, after a cursor (`nextCursor` of the last page; the start when absent). */
  events(page?: { after?: string; limit?: number }, options?: CallOptions): Promise<EventPage>
  /** Registers a webhook endpoint; the answer holds its secret, which is never shown again. */
  createWebhook(
    body: { url: string; events?: string[]; description?: string },
    options?: CallOptions,
  ): Promise<CreatedWebhook>
  webhooks(options?: CallOptions): Promise<WebhookEndpoint[]>
  deleteWebhook(id: string, options?: CallOptions): Promise<void>
  /** Delivers a `webhook.test` event to the endpoint. */
  testWebhook(id: string, options?: CallOptions): Promise<void>
  /** A new secret for the endpoint; the previous one keeps signing for 24 hours. */
  rotateWebhookSecret(id: string, options?: CallOptions): Promise<string>
  /** The endpoint's delivery attempts, newest first, a page at a time. */
  webhookAttempts(id: string, page?: { cursor?: string }, options?: CallOptions): Promise<WebhookAttemptPage>
  /** Delivers again the failed deliveries of one event, or of every event since a time; how many were queued. */
  replayWebhook(id: string, which: { eventId: string } | { since: string }, options?: CallOptions): Promise<number>
  /** The e-mails the user asked for: `countersigned`, one when someone signs after them. */
  notifications(options?: CallOptions): Promise<Notifications>
  /** Turns the e-mails on or off (all are off until asked for); answers what is now set. */
  setNotifications(notifications: Notifications, options?: CallOptions): Promise<Notifications>
  /** Everything the service holds about the user, as one document (rate-limited: a few an hour). */
  exportAccount(options?: CallOptions): Promise<AccountExport>
  /**
   * Deletes the user's account (403 `REAUTHENTICATION_REQUIRED` unless the token was issued in the last 10 minutes:
   * sign in again first). The anchors stay on chain; their stored details are erased.
   */
  deleteAccount(options?: CallOptions): Promise<void>
  /** The public verification of a transaction: `0x` + 64 hex, or its 43-character base64url form. */
  verify(txHash: string, options?: CallOptions): Promise<VerifyResult>
  /**
   * The anchors naming `txHash` as their previous past the first `offset` relayed (a verification lists the first
   * ones and counts the rest in `moreSuccessors`), checked on chain.
   */
  successorPage(txHash: string, offset: number, options?: CallOptions): Promise<SuccessorPage>
  /** verify, with null for a transaction that anchors nothing (404 `ANCHOR_NOT_FOUND`): checkSignedPdf's `verify`. */
  lookupAnchor(txHash: string, options?: CallOptions): Promise<VerifyResult | null>
  library: {
    get(options?: CallOptions): Promise<Library>
    sync(body: LibrarySyncBody, options?: CallOptions): Promise<LibrarySyncResult>
    delete(options?: CallOptions): Promise<void>
    exists(options?: CallOptions): Promise<LibraryStatus>
  }
}

const RETRIED_STATUSES = new Set([429, 502, 503])
const MAX_POLL_INTERVAL_MS = 10_000

interface Request {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  path: string
  body?: unknown
  signal?: AbortSignal | undefined
  /** A public answer, asked without the token: with one, no shared cache (the fleet's HAProxy) may answer it. */
  anonymous?: boolean
}

export function createAnchorClient(options: AnchorClientOptions): AnchorClient {
  const baseUrl = options.baseUrl.replace(/\/+$/, '')
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis)
  const timeoutMs = options.timeoutMs ?? 30_000
  const retries = options.retries ?? 0
  const retryDelayMs = options.retryDelayMs ?? 500
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 30_000

  async function attempt(request: Request): Promise<Response> {
    const url = `${baseUrl}${request.path}`
    const headers: Record<string, string> = { accept: 'application/json' }
    if (request.body !== undefined) headers['content-type'] = 'application/json'
    if (options.token && !request.anonymous) headers.authorization = `Bearer ${options.token}`
    const limit = timeLimit(timeoutMs, request.signal)
    try {
      return await fetchImpl(url, {
        method: request.method,
        headers,
        body: request.body === undefined ? null : JSON.stringify(request.body),
        signal: limit.signal,
        // A bearer token authenticates; cookies and the referrer have nothing to add.
        credentials: 'omit',
        referrerPolicy: 'no-referrer',
      })
    } catch (error) {
      if (request.signal?.aborted) throw request.signal.reason
      throw new AnchorNetworkError(limit.timedOut() ? 'timeout' : 'unreachable', url, { cause: error })
    } finally {
      limit.clear()
    }
  }

  /** Sends the request, retrying what the caller allowed; resolves with a 2xx response or throws. */
  async function send(request: Request): Promise<Response> {
    for (let retry = 0; ; retry++) {
      const response = await attempt(request)
      if (response.ok) return response
      const error = await toApiError(response)
      const wait = error.retryAfter !== undefined ? error.retryAfter * 1000 : retryDelayMs * 2 ** retry
      if (retry >= retries || !RETRIED_STATUSES.has(error.status) || wait > maxRetryDelayMs) throw error
      await delay(wait, request.signal)
    }
  }

  async function call<S extends z.ZodType>(schema: S, request: Request): Promise<z.infer<S>> {
    const response = await send(request)
    const parsed = schema.safeParse(await response.json().catch(() => undefined))
    if (!parsed.success) {
      throw new AnchorApiError(
        response.status,
        {
          code: 'INVALID_RESPONSE',
          detail: `the answer of ${request.method} ${request.path} does not have the documented shape`,
        },
        undefined,
      )
    }
    return parsed.data
  }

  async function callNoContent(request: Request): Promise<void> {
    await send(request)
  }

  async function awaitConfirmation(pending: RelayResult, relayOptions: RelayOptions): Promise<RelayResult> {
    const deadline = Date.now() + (relayOptions.waitMs ?? 0)
    let interval = relayOptions.pollIntervalMs ?? 1000
    let state: AnchorState | undefined
    while (Date.now() + interval <= deadline) {
      await delay(interval, relayOptions.signal)
      interval = Math.min(interval * 1.5, MAX_POLL_INTERVAL_MS)
      state = await client.anchor(pending.compositeHash, relayOptions)
      if (state.status === 'confirmed') {
        const { txHash, blockNumber, compositeHash, previousTxHash } = state
        return { txHash, blockNumber, compositeHash, previousTxHash, status: 'confirmed' }
      }
      if (state.status === 'failed') break
    }
    throw new AnchorNotConfirmedError(
      state?.status === 'failed' ? 'failed' : 'pending',
      state?.txHash ?? pending.txHash,
      pending.compositeHash,
    )
  }

  const client: AnchorClient = {
    baseUrl,
    withToken: (token) => createAnchorClient({ ...options, token }),
    async requestCode(email, callOptions) {
      await call(CodeSentSchema, {
        method: 'POST',
        path: '/api/auth/magic-link',
        body: { email } satisfies RequestCodeBody,
        signal: callOptions?.signal,
      })
    },
    verifyCode: (email, code, callOptions) =>
      call(SignInSchema, {
        method: 'POST',
        path: '/api/auth/magic-link/verify',
        body: { email, code } satisfies VerifyCodeBody,
        signal: callOptions?.signal,
      }),
    oauthSignInUrl: (provider, codeChallenge) =>
      `${baseUrl}/api/auth/${provider}?${new URLSearchParams({ code_challenge: codeChallenge, code_challenge_method: 'S256' })}`,
    exchange: (code, codeVerifier, callOptions) =>
      call(SignInSchema, {
        method: 'POST',
        path: '/api/auth/exchange',
        body: { code, code_verifier: codeVerifier } satisfies ExchangeBody,
        signal: callOptions?.signal,
      }),
    me: (callOptions) => call(MeSchema, { method: 'GET', path: '/api/auth/me', signal: callOptions?.signal }),
    logout: (callOptions) => callNoContent({ method: 'POST', path: '/api/auth/logout', signal: callOptions?.signal }),
    info: (callOptions) => call(InfoSchema, { method: 'GET', path: '/api/info', signal: callOptions?.signal }),
    async relay(body, relayOptions = {}) {
      const { compositeHash, previousTxHash, encryptedPayload, salt } = body
      const result = await call(RelaySchema, {
        method: 'POST',
        path: '/api/relay',
        body: {
          compositeHash,
          previousTxHash,
          encryptedPayload,
          ...(salt !== undefined && { salt }),
        } satisfies RelayBody,
        signal: relayOptions.signal,
      })
      if (result.status === 'confirmed' || !relayOptions.waitMs) return result
      return awaitConfirmation(result, relayOptions)
    },
    signerCertificate: (csr, callOptions) =>
      call(SignerCertificateSchema, {
        method: 'POST',
        path: '/api/signer-certificates',
        body: { csr: toBase64(csr) },
        signal: callOptions?.signal,
      }),
    pdfSignature: ({ txHash, cms }, callOptions) =>
      call(PdfSignatureSchema, {
        method: 'POST',
        path: '/api/pdf-signatures',
        body: { txHash, cms: toBase64(cms) },
        signal: callOptions?.signal,
      }),
    documentTimestamp: async (digest, callOptions) =>
      fromBase64(
        (
          await call(DocumentTimestampSchema, {
            method: 'POST',
            path: '/api/document-timestamps',
            body: { digest: toHex(digest) },
            signal: callOptions?.signal,
          })
        ).token,
      ),
    anchor: (compositeHash, callOptions) =>
      call(AnchorStateSchema, {
        method: 'GET',
        path: `/api/anchors/${encodeURIComponent(compositeHash)}`,
        signal: callOptions?.signal,
      }),
    anchors: (page = {}, callOptions) => {
      const search = new URLSearchParams()
      if (page.cursor) search.set('cursor', page.cursor)
      if (page.limit !== undefined) search.set('limit', String(page.limit))
      const query = search.size > 0 ? `?${search}` : ''
      return call(AnchorPageSchema, { method: 'GET', path: `/api/anchors${query}`, signal: callOptions?.signal })
    },
    events: (page = {}, callOptions) => {
      const search = new URLSearchParams()
      if (page.after) search.set('after', page.after)
      if (page.limit !== undefined) search.set('limit', String(page.limit))
      const query = search.size > 0 ? `?${search}` : ''
      return call(EventPageSchema, { method: 'GET', path: `/api/events${query}`, signal: callOptions?.signal })
    },
    createWebhook: (body, callOptions) =>
      call(CreatedWebhookSchema, { method: 'POST', path: '/api/webhooks', body, signal: callOptions?.signal }),
    webhooks: async (callOptions) =>
      (
        await call(z.object({ webhooks: z.array(WebhookSchema) }), {
          method: 'GET',
          path: '/api/webhooks',
          signal: callOptions?.signal,
        })
      ).webhooks,
    deleteWebhook: (id, callOptions) =>
      callNoContent({ method: 'DELETE', path: `/api/webhooks/${encodeURIComponent(id)}`, signal: callOptions?.signal }),
    rotateWebhookSecret: async (id, callOptions) =>
      (
        await call(z.object({ secret: z.string() }), {
          method: 'POST',
          path: `/api/webhooks/${encodeURIComponent(id)}/rotate-secret`,
          signal: callOptions?.signal,
        })
      ).secret,
    webhookAttempts: (id, page = {}, callOptions) =>
      call(WebhookAttemptPageSchema, {
        method: 'GET',
        path: `/api/webhooks/${encodeURIComponent(id)}/attempts${page.cursor ? `?cursor=${encodeURIComponent(page.cursor)}` : ''}`,
        signal: callOptions?.signal,
      }),
    replayWebhook: async (id, which, callOptions) =>
      (
        await call(z.object({ queued: z.number() }), {
          method: 'POST',
          path: `/api/webhooks/${encodeURIComponent(id)}/replay`,
          body: which,
          signal: callOptions?.signal,
        })
      ).queued,
    testWebhook: async (id, callOptions) => {
      await call(z.object({ queued: z.literal(true) }), {
        method: 'POST',
        path: `/api/webhooks/${encodeURIComponent(id)}/test`,
        signal: callOptions?.signal,
      })
    },
    notifications: (callOptions) =>
      call(NotificationsSchema, { method: 'GET', path: '/api/account/notifications', signal: callOptions?.signal }),
    setNotifications: (notifications, callOptions) =>
      call(NotificationsSchema, {
        method: 'PUT',
        path: '/api/account/notifications',
        body: notifications,
        signal: callOptions?.signal,
      }),
    deleteAccount: (callOptions) =>
      callNoContent({ method: 'DELETE', path: '/api/account', signal: callOptions?.signal }),
    exportAccount: (callOptions) =>
      call(AccountExportSchema, { method: 'GET', path: '/api/account/export', signal: callOptions?.signal }),
    verify: (txHash, callOptions) =>
      call(VerifySchema, {
        method: 'GET',
        path: `/api/verify/${encodeURIComponent(txHash)}`,
        signal: callOptions?.signal,
        anonymous: true,
      }),
    successorPage: (txHash, offset, callOptions) =>
      call(SuccessorPageSchema, {
        method: 'GET',
        path: `/api/verify/${encodeURIComponent(txHash)}/successors?offset=${offset}`,
        signal: callOptions?.signal,
        anonymous: true,
      }),
    lookupAnchor: (txHash, callOptions) =>
      client.verify(txHash, callOptions).catch((error: unknown) => {
        if (error instanceof AnchorApiError && error.code === 'ANCHOR_NOT_FOUND') return null
        throw error
      }),
    library: {
      get: (callOptions) => call(LibrarySchema, { method: 'GET', path: '/api/library', signal: callOptions?.signal }),
      sync: (body, callOptions) =>
        call(LibrarySyncResultSchema, { method: 'PUT', path: '/api/library/sync', body, signal: callOptions?.signal }),
      delete: (callOptions) => callNoContent({ method: 'DELETE', path: '/api/library', signal: callOptions?.signal }),
      exists: (callOptions) =>
        call(LibraryStatusSchema, { method: 'GET', path: '/api/library/exists', signal: callOptions?.signal }),
    },
  }
  return client
}

async function toApiError(response: Response): Promise<AnchorApiError> {
  const body: unknown = await response.json().catch(() => undefined)
  const problem =
    typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {}
  return new AnchorApiError(response.status, problem, parseRetryAfter(response.headers.get('retry-after')))
}

/** The caller's signal combined with a time limit (AbortSignal.any is too new for some of the browsers served). */
function timeLimit(ms: number, outer: AbortSignal | undefined) {
  const controller = new AbortController()
  let timedOut = false
  const timer = setTimeout(() => {
    timedOut = true
    controller.abort(new DOMException('request timed out', 'TimeoutError'))
  }, ms)
  const onAbort = () => controller.abort(outer?.reason)
  if (outer?.aborted) onAbort()
  else outer?.addEventListener('abort', onAbort, { once: true })
  return {
    signal: controller.signal,
    timedOut: () => timedOut,
    clear() {
      clearTimeout(timer)
      outer?.removeEventListener('abort', onAbort)
    },
  }
}

function delay(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason)
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** The CMS's DER from a `pdfSignature` answer: what signPdf's `pdfSignature` resolves with. */
export function pdfSignatureCms(result: PdfSignatureResult): Uint8Array {
  return fromBase64(result.cms)
}
