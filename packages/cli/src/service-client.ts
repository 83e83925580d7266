// The CLI's view of the service: @docanchor/client's API client, with its errors turned into CliErrors that say
// what to do (start the service, log in again) and never echo a token.

import {
  type AccountExport,
  AnchorApiError,
  type AnchorClient,
  AnchorNetworkError,
  AnchorNotConfirmedError,
  type AnchorPage,
  type AnchorRecord,
  type AnchorRequest,
  type CreatedWebhook,
  createAnchorClient,
  type EventPage,
  type LongTermValidationOptions,
  type Notifications,
  pdfSignatureCms,
  type ServiceInfo,
  type SignerCertificateResult,
  type SignInResult,
  serviceLongTermValidation,
  type WebhookAttemptPage,
  type WebhookEndpoint,
} from '@docanchor/client'
import { CliError, EXIT } from './cli-errors.ts'

export interface ServiceClientOptions {
  /** Time to wait for a pending (202) anchor to be confirmed. */
  relayTimeoutMs?: number
  fetch?: typeof fetch
}

export class ServiceClient {
  readonly baseUrl: string
  private readonly api: AnchorClient
  private readonly relayTimeoutMs: number
  private readonly fetch: typeof fetch | undefined

  constructor(
    baseUrl: string,
    private readonly token?: string,
    options: ServiceClientOptions = {},
  ) {
    this.api = createAnchorClient({ baseUrl, token, fetch: options.fetch, retries: 2 })
    this.baseUrl = this.api.baseUrl
    this.relayTimeoutMs = options.relayTimeoutMs ?? 120_000
    this.fetch = options.fetch
  }

  requestCode(email: string): Promise<void> {
    return this.explain(() => this.api.requestCode(email))
  }

  verifyCode(email: string, code: string): Promise<SignInResult> {
    return this.explain(() => this.api.verifyCode(email, code))
  }

  logout(): Promise<void> {
    return this.explain(() => this.api.logout(), true)
  }

  info(): Promise<ServiceInfo> {
    return this.explain(() => this.api.info())
  }

  /** Anchors the request and waits until it is confirmed. */
  relay(request: AnchorRequest): Promise<{ txHash: string }> {
    return this.explain(() => this.api.relay(request, { waitMs: this.relayTimeoutMs }), true)
  }

  /** A certificate of the service's CA for the login's own key (`csr`, PKCS#10 DER). */
  signerCertificate(csr: Uint8Array): Promise<SignerCertificateResult> {
    return this.explain(() => this.api.signerCertificate(csr), true)
  }

  /** The login's PDF signature (CMS, DER) for one of its confirmed anchors, with the service's timestamp added. */
  async pdfSignature(txHash: string, cms: Uint8Array): Promise<Uint8Array> {
    return pdfSignatureCms(await this.explain(() => this.api.pdfSignature({ txHash, cms }), true))
  }

  /** Long-term validation through the service: its document timestamps and its CA's revocation status. */
  longTermValidation(info: ServiceInfo): LongTermValidationOptions {
    const options = serviceLongTermValidation(this.api, info, { fetch: this.fetch })
    return {
      ...options,
      documentTimestamp: (digest) => this.explain(() => options.documentTimestamp(digest), true),
    }
  }

  /** A page of the login's anchors, newest first. */
  anchors(page: { cursor?: string; limit?: number }): Promise<AnchorPage> {
    return this.explain(() => this.api.anchors(page), true)
  }

  /** The login's events, oldest first, after a cursor. */
  events(page: { after?: string; limit?: number }): Promise<EventPage> {
    return this.explain(() => this.api.events(page), true)
  }

  createWebhook(body: { url: string; events?: string[]; description?: string }): Promise<CreatedWebhook> {
    return this.explain(() => this.api.createWebhook(body), true)
  }

  webhooks(): Promise<WebhookEndpoint[]> {
    return this.explain(() => this.api.webhooks(), true)
  }

  deleteWebhook(id: string): Promise<void> {
    return this.explain(() => this.api.deleteWebhook(id), true)
  }

  rotateWebhookSecret(id: string): Promise<string> {
    return this.explain(() => this.api.rotateWebhookSecret(id), true)
  }

  webhookAttempts(id: string): Promise<WebhookAttemptPage> {
    return this.explain(() => this.api.webhookAttempts(id), true)
  }

  replayWebhook(id: string, which: { eventId: string } | { since: string }): Promise<number> {
    return this.explain(() => this.api.replayWebhook(id, which), true)
  }

  testWebhook(id: string): Promise<void> {
    return this.explain(() => this.api.testWebhook(id), true)
  }

  /** The e-mails the login's account asked for. */
  notifications(): Promise<Notifications> {
    return this.explain(() => this.api.notifications(), true)
  }

  setNotifications(notifications: Notifications): Promise<Notifications> {
    return this.explain(() => this.api.setNotifications(notifications), true)
  }

  /** Everything the service holds about the login's account. */
  exportAccount(): Promise<AccountExport> {
    return this.explain(() => this.api.exportAccount(), true)
  }

  /** Deletes the login's account; the service wants a sign-in of the last few minutes for it. */
  deleteAccount(): Promise<void> {
    return this.explain(() => this.api.deleteAccount(), true)
  }

  /** The anchor of a transaction as the service reports it; null when there is none. */
  async anchor(txHash: string): Promise<AnchorRecord | null> {
    try {
      return await this.explain(() => this.api.verify(txHash))
    } catch (error) {
      if (error instanceof CliError && error.code === 'ANCHOR_NOT_FOUND') return null
      throw error
    }
  }

  private async explain<T>(work: () => Promise<T>, needsLogin = false): Promise<T> {
    if (needsLogin && !this.token) throw notLoggedIn()
    try {
      return await work()
    } catch (error) {
      throw toCliError(error, this.baseUrl, needsLogin)
    }
  }
}

function toCliError(error: unknown, baseUrl: string, needsLogin: boolean): unknown {
  if (error instanceof AnchorNetworkError) {
    return new CliError(
      `cannot reach the service at ${baseUrl} (is it running? set --service or ANCHOR_URL)`,
      EXIT.service,
      'SERVICE_UNREACHABLE',
    )
  }
  if (error instanceof AnchorNotConfirmedError) {
    return new CliError(
      `the anchor transaction is still ${error.state}; run the same command again later`,
      EXIT.service,
      'RELAY_PENDING',
    )
  }
  if (!(error instanceof AnchorApiError)) return error
  if (error.code === 'INVALID_CODE') {
    return new CliError('wrong or expired code: run `anchor login` to get a new one', EXIT.failed, 'INVALID_CODE')
  }
  if (error.code === 'REAUTHENTICATION_REQUIRED') {
    return new CliError(
      'the service wants a recent sign-in for this: run `anchor login`, then the same command again',
      EXIT.service,
      error.code,
    )
  }
  if (error.status === 401 && needsLogin) {
    return new CliError(
      'the service refused the login (expired or revoked): run `anchor login` again',
      EXIT.service,
      'LOGIN_EXPIRED',
    )
  }
  const wait =
    error.status === 429 && error.retryAfter !== undefined ? `; try again in ${duration(error.retryAfter)}` : ''
  return new CliError(
    `the service answered ${error.status} ${error.code}: ${error.detail}${wait}`,
    EXIT.service,
    error.code,
  )
}

/** "45 s", "12 min", "2 h 5 min": how long to wait, as a person reads it. */
function duration(seconds: number): string {
  if (seconds < 90) return `${Math.max(1, Math.round(seconds))} s`
  const minutes = Math.ceil(seconds / 60)
  if (minutes < 90) return `${minutes} min`
  return `${Math.floor(minutes / 60)} h ${minutes % 60} min`
}

export const notLoggedIn = () =>
  new CliError('not logged in: run `anchor login` (or set ANCHOR_TOKEN)', EXIT.service, 'NOT_LOGGED_IN')
