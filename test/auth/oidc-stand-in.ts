// A real OpenID provider (oidc-provider) on loopback standing in for Google or Microsoft. Its interaction step
// signs in whichever test account the test chose, as a user clicking through the provider's pages would.
import { generateKeyPairSync } from 'node:crypto'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Provider } from 'oidc-provider'

export interface TestAccount {
  sub: string
  email: string
  email_verified?: boolean
  name?: string
  /** Microsoft's tenant id claim. */
  tid?: string
}

export interface StandInOptions {
  clientId: string
  clientSecret: string
  redirectUri: string
  /**
   * Microsoft style: the provider's issuer is `<origin>/<tenant>/v2.0`, and `<origin>/common/v2.0` serves discovery
   * with the template issuer `<origin>/{tenantid}/v2.0`, as login.microsoftonline.com does.
   */
  tenant?: string
}

export interface StandIn {
  /** The issuer the service is configured with (`…/common/v2.0` in Microsoft style). */
  configuredIssuer: string
  /** The account the next interaction signs in. */
  account: TestAccount
  close(): Promise<void>
}

export async function startStandIn(options: StandInOptions, account: TestAccount): Promise<StandIn> {
  const server = createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const mount = options.tenant === undefined ? '' : `/${options.tenant}/v2.0`
  const issuer = `${origin}${mount}`
  const state: StandIn = {
    configuredIssuer: options.tenant === undefined ? issuer : `${origin}/common/v2.0`,
    account,
    close: () => closeServer(server),
  }

  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        client_secret: options.clientSecret,
        redirect_uris: [options.redirectUri],
        grant_types: ['authorization_code'],
        response_types: ['code'],
        token_endpoint_auth_method: 'client_secret_post',
      },
    ],
    jwks: { keys: [{ ...privateKey.export({ format: 'jwk' }), kid: 'stand-in', alg: 'RS256', use: 'sig' }] },
    cookies: { keys: ['stand-in-cookie-key-0123456789'] },
    claims: { openid: ['sub', 'tid'], email: ['email', 'email_verified'], profile: ['name'] },
    // Scope claims go into the ID token itself, as Google and Microsoft put them there.
    conformIdTokenClaims: false,
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    interactions: { url: (_ctx: unknown, interaction: { uid: string }) => `/interaction/${interaction.uid}` },
    findAccount: (_ctx: unknown, sub: string) =>
      sub === state.account.sub ? { accountId: sub, claims: () => ({ ...state.account }) } : undefined,
  })
  const handle = provider.callback()

  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const url = req.url ?? '/'
    if (url.startsWith('/interaction/')) {
      interact(provider, req, res, state, options.clientId).catch((error: Error) => {
        res.statusCode = 500
        res.end(error.message)
      })
      return
    }
    if (options.tenant !== undefined && url === '/common/v2.0/.well-known/openid-configuration') {
      commonDiscovery(issuer, origin).then(
        (body) => {
          res.setHeader('content-type', 'application/json')
          res.end(body)
        },
        (error: Error) => {
          res.statusCode = 500
          res.end(error.message)
        },
      )
      return
    }
    if (mount !== '') {
      if (!url.startsWith(`${mount}/`)) {
        res.statusCode = 404
        res.end()
        return
      }
      // Mounted like an Express sub-app: oidc-provider derives its endpoint URLs from originalUrl.
      Object.assign(req, { originalUrl: url })
      req.url = url.slice(mount.length)
    }
    handle(req, res)
  })
  return state
}

/** The provider's own discovery document with Microsoft's tenant-independent issuer template. */
async function commonDiscovery(issuer: string, origin: string): Promise<string> {
  const response = await fetch(`${issuer}/.well-known/openid-configuration`)
  const metadata = (await response.json()) as Record<string, unknown>
  return JSON.stringify({ ...metadata, issuer: `${origin}/{tenantid}/v2.0` })
}

async function interact(
  provider: Provider,
  req: IncomingMessage,
  res: ServerResponse,
  state: StandIn,
  clientId: string,
): Promise<void> {
  const details = await provider.interactionDetails(req, res)
  if (details.prompt.name === 'login') {
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: state.account.sub } },
      {
        mergeWithLastSubmission: false,
      },
    )
    return
  }
  const grant = new provider.Grant({ accountId: details.session?.accountId ?? state.account.sub, clientId })
  const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] }
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
  await provider.interactionFinished(
    req,
    res,
    { consent: { grantId: await grant.save() } },
    {
      mergeWithLastSubmission: true,
    },
  )
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections()
  return new Promise((resolve) => server.close(() => resolve()))
}
