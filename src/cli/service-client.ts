// The CLI's HTTP client of the service: sign-in, info, relay and verify, with failures turned into CliErrors that
// say what to do (start the service, log in again) and never echo a token.

import type { AnchorRecord } from '../pdf/check-signed-pdf.ts'
import type { AnchorRequest } from '../pdf/sign-pdf.ts'
import { CliError, EXIT } from './cli-errors.ts'

export interface ServiceInfo {
  chainId: number
  contractAddress: string
  verifyBaseUrl: string
  publicRpcUrl: string | null
}

export interface SignInResult {
  token: string
  expiresAt: string
  user: { id: string; email: string }
}

export interface ServiceClientOptions {
  /** Time to keep asking while the relay answers 202 (pending). */
  relayTimeoutMs?: number
  fetch?: typeof fetch
}

const RELAY_RETRY_MS = 1000

export class ServiceClient {
  readonly baseUrl: string
  private readonly fetch: typeof fetch
  private readonly relayTimeoutMs: number

  constructor(
    baseUrl: string,
    private readonly token?: string,
    options: ServiceClientOptions = {},
  ) {
    this.baseUrl = baseUrl.replace(/\/+$/, '')
    this.fetch = options.fetch ?? fetch
    this.relayTimeoutMs = options.relayTimeoutMs ?? 120_000
  }

  private async request(method: string, path: string, body?: unknown, auth = false): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json' }
    if (body !== undefined) headers['content-type'] = 'application/json'
    if (auth) {
      if (!this.token) throw notLoggedIn()
      headers.authorization = `Bearer ${this.token}`
    }
    let response: Response
    try {
      response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      })
    } catch {
      throw new CliError(
        `cannot reach the service at ${this.baseUrl} (is it running? set --service or ANCHOR_URL)`,
        EXIT.service,
        'SERVICE_UNREACHABLE',
      )
    }
    if (response.status === 401 && auth) {
      throw new CliError(
        'the service refused the login (expired or revoked): run `anchor login` again',
        EXIT.service,
        'LOGIN_EXPIRED',
      )
    }
    return response
  }

  private async json<T>(response: Response, expected: number[]): Promise<T> {
    if (expected.includes(response.status)) return (await response.json()) as T
    let detail = response.statusText
    let code = `HTTP_${response.status}`
    try {
      const problem = (await response.json()) as { detail?: string; code?: string }
      detail = problem.detail ?? detail
      code = problem.code ?? code
    } catch {}
    throw new CliError(`the service answered ${response.status} ${code}: ${detail}`, EXIT.service, code)
  }

  async requestCode(email: string): Promise<void> {
    await this.json(await this.request('POST', '/api/auth/magic-link', { email }), [202])
  }

  async verifyCode(email: string, code: string): Promise<SignInResult> {
    const response = await this.request('POST', '/api/auth/magic-link/verify', { email, code })
    if (response.status === 401) {
      throw new CliError('wrong or expired code: run `anchor login` to get a new one', EXIT.failed, 'INVALID_CODE')
    }
    return this.json<SignInResult>(response, [200])
  }

  async logout(): Promise<void> {
    const response = await this.request('POST', '/api/auth/logout', undefined, true)
    if (response.status !== 204) await this.json(response, [])
  }

  async info(): Promise<ServiceInfo> {
    return this.json<ServiceInfo>(await this.request('GET', '/api/info'), [200])
  }

  /** Anchors the request and waits until it is confirmed: a 202 is asked again (the relay is idempotent). */
  async relay(request: AnchorRequest): Promise<{ txHash: string }> {
    const deadline = Date.now() + this.relayTimeoutMs
    for (;;) {
      const response = await this.request('POST', '/api/relay', request, true)
      const body = await this.json<{ txHash: string; status: string }>(response, [200, 201, 202])
      if (body.status === 'confirmed') return { txHash: body.txHash }
      if (Date.now() > deadline) {
        throw new CliError(
          `the anchor transaction is still pending after ${this.relayTimeoutMs / 1000} s; run the same command again later`,
          EXIT.service,
          'RELAY_PENDING',
        )
      }
      await new Promise((resolve) => setTimeout(resolve, RELAY_RETRY_MS))
    }
  }

  /** The anchor of a transaction as the service reports it; null when there is none. */
  async anchor(txHash: string): Promise<AnchorRecord | null> {
    const response = await this.request('GET', `/api/verify/${txHash}`)
    if (response.status === 404) return null
    return this.json<AnchorRecord>(response, [200])
  }
}

export const notLoggedIn = () =>
  new CliError('not logged in: run `anchor login` (or set ANCHOR_TOKEN)', EXIT.service, 'NOT_LOGGED_IN')
