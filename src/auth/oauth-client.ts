// One OpenID Connect provider (Google, Microsoft) through openid-client: discovery, the authorization URL, and the
// callback's code exchange with every check (state, PKCE, nonce, signature, issuer, audience, lifetime).

import { decodeJwt } from 'jose'
import * as client from 'openid-client'
import type { OAuthProviderName } from './oauth-flows.ts'

export interface OAuthClientOptions {
  provider: OAuthProviderName
  issuer: string
  clientId: string
  clientSecret: string
  /** Multi-tenant issuers only: the tenants (lower case) whose users may sign in; empty admits any. */
  allowedTenants: readonly string[]
  redirectUri: string
  /** Test-only: talk to http:// issuers (a local provider). */
  allowInsecureRequests: boolean
  timeoutSeconds?: number
}

/** Codes are deep-linked to the app as `?error=<code>`. */
export type OAuthErrorCode = 'provider_unavailable' | 'access_denied' | 'invalid_response' | 'email_not_verified'

export class OAuthError extends Error {
  override name = 'OAuthError'
  constructor(
    readonly code: OAuthErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options)
  }
}

export interface FlowChecks {
  state: string
  nonce: string
  codeVerifier: string
}

export interface VerifiedIdentity {
  subject: string
  email: string
  name: string | undefined
}

interface Discovered {
  config: client.Configuration
  metadata: client.ServerMetadata
  /** Microsoft's `/common` and `/organizations` issuers: `https://login.microsoftonline.com/{tenantid}/v2.0`. */
  tenantTemplate: string | undefined
}

const TENANT_PLACEHOLDER = '{tenantid}'
const TENANT_ID = /^[A-Za-z0-9-]{1,64}$/
const SCOPE = 'openid email profile'

export class OAuthClient {
  private discovered: Promise<Discovered> | undefined
  private readonly timeoutSeconds: number

  constructor(private readonly options: OAuthClientOptions) {
    this.timeoutSeconds = options.timeoutSeconds ?? 10
  }

  get provider(): OAuthProviderName {
    return this.options.provider
  }

  /** Where the browser goes to sign in; `state`, `nonce` and the PKCE challenge bind the answer to this flow. */
  async authorizationUrl(checks: FlowChecks): Promise<URL> {
    const { config } = await this.discover()
    return client.buildAuthorizationUrl(config, {
      redirect_uri: this.options.redirectUri,
      scope: SCOPE,
      state: checks.state,
      nonce: checks.nonce,
      code_challenge: await client.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    })
  }

  /** Validates the provider's answer to the flow and returns the verified identity it proves. */
  async identify(callbackUrl: URL, checks: FlowChecks): Promise<VerifiedIdentity> {
    const providerError = callbackUrl.searchParams.get('error')
    if (providerError !== null) {
      throw new OAuthError(
        providerError === 'access_denied' ? 'access_denied' : 'invalid_response',
        'the provider answered with an error',
      )
    }
    const discovered = await this.discover()
    const grantChecks: client.AuthorizationCodeGrantChecks = {
      expectedState: checks.state,
      expectedNonce: checks.nonce,
      pkceCodeVerifier: checks.codeVerifier,
      idTokenExpected: true,
    }
    let claims: client.IDToken | undefined
    try {
      const config = discovered.tenantTemplate
        ? await this.tenantConfiguration(discovered, callbackUrl, checks)
        : discovered.config
      const tokens = await client.authorizationCodeGrant(config, callbackUrl, grantChecks)
      claims = tokens.claims()
    } catch (error) {
      if (error instanceof OAuthError) throw error
      throw new OAuthError('invalid_response', 'the provider response failed validation', { cause: error })
    }
    if (!claims) throw new OAuthError('invalid_response', 'the provider sent no ID token')
    return this.identityOf(claims)
  }

  private identityOf(claims: client.IDToken): VerifiedIdentity {
    const { email, name } = claims
    if (typeof email !== 'string' || email.length > 320 || !email.includes('@')) {
      throw new OAuthError('email_not_verified', 'the ID token carries no e-mail address')
    }
    // Accounts are keyed by e-mail, so an address the provider has not verified must never sign in: it would let
    // anyone who can type an address into a provider account take over the account of that address.
    // Microsoft states ownership with `xms_edov` (an optional claim of the app registration).
    const verified =
      claims.email_verified === true || (this.options.provider === 'microsoft' && claims.xms_edov === true)
    if (!verified) throw new OAuthError('email_not_verified', 'the provider has not verified the e-mail address')
    return { subject: claims.sub, email, name: typeof name === 'string' ? name.slice(0, 200) : undefined }
  }

  /**
   * Multi-tenant issuers name the tenant only inside the ID token (`tid`). The code is exchanged once; the tenant's
   * issuer is derived from the token's `tid`, and openid-client then validates the same token response against
   * that concrete issuer, so `iss` must equal `https://…/<tid>/v2.0` of the very token that names the tenant (and
   * the signature, audience, nonce, state and lifetime are checked as for any other provider).
   */
  private async tenantConfiguration(
    discovered: Discovered,
    callbackUrl: URL,
    checks: FlowChecks,
  ): Promise<client.Configuration> {
    const code = callbackUrl.searchParams.get('code')
    const tokenEndpoint = discovered.metadata.token_endpoint
    if (code === null || tokenEndpoint === undefined) {
      throw new OAuthError('invalid_response', 'the callback carries no authorization code')
    }
    if (!this.options.allowInsecureRequests && new URL(tokenEndpoint).protocol !== 'https:') {
      throw new OAuthError('provider_unavailable', 'the token endpoint is not https')
    }
    // The state must be ours before the code leaves this service; openid-client checks it again below.
    if (callbackUrl.searchParams.get('state') !== checks.state) {
      throw new OAuthError('invalid_response', 'the state does not match the flow')
    }
    const response = await fetch(tokenEndpoint, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code',
        code,
        redirect_uri: this.options.redirectUri,
        code_verifier: checks.codeVerifier,
        client_id: this.options.clientId,
        client_secret: this.options.clientSecret,
      }),
      redirect: 'manual',
      signal: AbortSignal.timeout(this.timeoutSeconds * 1000),
    })
    const body = await response.text()
    const tenant = tenantOf(body)
    // Refusing needs no validated token: a token naming another tenant is refused, whether or not it is genuine.
    const { allowedTenants } = this.options
    if (allowedTenants.length > 0 && !allowedTenants.includes(tenant.toLowerCase())) {
      throw new OAuthError('access_denied', 'the account belongs to an organization that may not sign in here')
    }
    const config = new client.Configuration(
      { ...discovered.metadata, issuer: discovered.tenantTemplate!.replace(TENANT_PLACEHOLDER, tenant) },
      this.options.clientId,
      this.options.clientSecret,
    )
    config.timeout = this.timeoutSeconds
    if (this.options.allowInsecureRequests) client.allowInsecureRequests(config)
    // The token response is handed over as received; every other request (the provider's keys) goes out as usual.
    config[client.customFetch] = (url, init) =>
      url === tokenEndpoint
        ? Promise.resolve(new Response(body, { status: response.status, headers: response.headers }))
        : fetch(url, init as RequestInit)
    return config
  }

  private discover(): Promise<Discovered> {
    this.discovered ??= this.load().catch((error: unknown) => {
      // Not cached: the next sign-in tries again.
      this.discovered = undefined
      throw error instanceof OAuthError
        ? error
        : new OAuthError('provider_unavailable', 'provider discovery failed', { cause: error })
    })
    return this.discovered
  }

  private async load(): Promise<Discovered> {
    const issuer = this.options.issuer.replace(/\/+$/, '')
    // The well-known URL itself, so that openid-client accepts a `{tenantid}` template; the issuer is checked here.
    const config = await client.discovery(
      new URL(`${issuer}/.well-known/openid-configuration`),
      this.options.clientId,
      this.options.clientSecret,
      undefined,
      {
        timeout: this.timeoutSeconds,
        execute: this.options.allowInsecureRequests ? [client.allowInsecureRequests] : [],
      },
    )
    const metadata = config.serverMetadata()
    let tenantTemplate: string | undefined
    if (metadata.issuer.includes(TENANT_PLACEHOLDER)) {
      const example = new URL(metadata.issuer.replace(TENANT_PLACEHOLDER, 'tenant'))
      if (example.origin !== new URL(issuer).origin) {
        throw new OAuthError('provider_unavailable', 'the tenant issuer template is on another origin')
      }
      tenantTemplate = metadata.issuer
    } else if (new URL(metadata.issuer).href !== new URL(issuer).href) {
      throw new OAuthError('provider_unavailable', 'the discovered issuer is not the configured one')
    }
    return { config, metadata, tenantTemplate }
  }
}

/** The token's claimed tenant, read before validation only to pick the issuer it is then validated against. */
function tenantOf(tokenResponseBody: string): string {
  try {
    const idToken = (JSON.parse(tokenResponseBody) as { id_token?: unknown }).id_token
    if (typeof idToken === 'string') {
      const { tid } = decodeJwt(idToken)
      if (typeof tid === 'string' && TENANT_ID.test(tid)) return tid
    }
  } catch {
    // Falls through to the error below.
  }
  throw new OAuthError('invalid_response', 'the ID token names no tenant')
}
