// Google and Microsoft sign-in: redirect to the provider, validate its answer, deep-link the result to the app.
// The callback sends `?token=<JWT>` by default (the specification), or `?code=<one-time code>` when the app opted in
// with a PKCE challenge and later exchanges the code at POST /api/auth/exchange with its verifier.
import type { FastifyReply } from 'fastify'
import * as oidc from 'openid-client'
import { z } from 'zod'
import { createExchangeCode, redeemExchangeCode } from '../../../auth/exchange-codes.ts'
import { TRUST_PROVIDERS, type TrustProvider } from '../../../auth/jwt.ts'
import { OAuthClient, OAuthError } from '../../../auth/oauth-client.ts'
import { type OAuthProviderName, saveOAuthFlow, takeOAuthFlow } from '../../../auth/oauth-flows.ts'
import { findUser, signInUser } from '../../../auth/users.ts'
import type { AppInstance } from '../../app-types.ts'
import { ProblemError, ProblemSchema } from '../../problem.ts'
import type { SignInLimiters } from './rate-limits.ts'
import { SignInResponseSchema } from './schemas.ts'
import type { SignIn } from './sign-in.ts'

const PROVIDERS: OAuthProviderName[] = ['google', 'microsoft']

/** Every `?error=` value the app can receive. */
type DeepLinkError =
  | OAuthError['code']
  | 'provider_not_configured'
  | 'invalid_state'
  | 'server_error'
  | 'account_blocked'

const BASE64URL_43 = /^[A-Za-z0-9_-]{43}$/

const StartQuerySchema = z.object({
  code_challenge: z
    .string()
    .regex(BASE64URL_43, 'an S256 challenge: base64url of 32 bytes, 43 characters')
    .optional()
    .describe('Opt-in hand-off: the callback deep-links a one-time code instead of the JWT'),
  code_challenge_method: z.literal('S256').optional(),
})

export interface OAuthSignInDependencies {
  limiters: SignInLimiters
  signIn: SignIn
}

export function authOAuthRoutes(app: AppInstance, deps: OAuthSignInDependencies): void {
  const { config, database } = app.deps
  const db = database.db
  const { limiters, signIn } = deps
  const clients = new Map<OAuthProviderName, OAuthClient>()
  for (const provider of PROVIDERS) {
    const settings = config.oauth[provider]
    if (!settings) continue
    clients.set(
      provider,
      new OAuthClient({
        provider,
        ...settings,
        redirectUri: `${config.publicUrl}/api/auth/${provider}/callback`,
        allowInsecureRequests: config.oauth.allowInsecureRequests,
      }),
    )
  }

  const deepLink = (reply: FastifyReply, params: Record<string, string>) => {
    const target = `${config.appScheme}://auth/callback?${new URLSearchParams(params)}`
    // The location can carry a token: no cache or referrer may keep it.
    return reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer').redirect(target, 302)
  }
  const fail = (reply: FastifyReply, error: DeepLinkError) => deepLink(reply, { error })

  for (const provider of PROVIDERS) {
    app.get(
      `/api/auth/${provider}`,
      {
        schema: {
          tags: ['auth'],
          summary: `Sign in with ${provider === 'google' ? 'Google' : 'Microsoft'}: redirects to the provider`,
          querystring: StartQuerySchema,
          response: { 302: z.null().describe('To the provider, or to the app with ?error='), 400: ProblemSchema },
        },
      },
      async (request, reply) => {
        const oauthClient = clients.get(provider)
        if (!oauthClient) return fail(reply, 'provider_not_configured')
        await limiters.oauthStartsPerIp(request)
        const flow = {
          provider,
          state: oidc.randomState(),
          nonce: oidc.randomNonce(),
          codeVerifier: oidc.randomPKCECodeVerifier(),
          appCodeChallenge: request.query.code_challenge ?? null,
        }
        let url: URL
        try {
          url = await oauthClient.authorizationUrl(flow)
        } catch (error) {
          request.log.warn({ provider, reason: reasonOf(error) }, 'OAuth sign-in could not start')
          return fail(reply, error instanceof OAuthError ? error.code : 'server_error')
        }
        await saveOAuthFlow(db, flow, config.signIn.oauthFlowTtlSeconds)
        return reply.header('cache-control', 'no-store').redirect(url.href, 302)
      },
    )

    app.get(
      `/api/auth/${provider}/callback`,
      {
        schema: {
          tags: ['auth'],
          summary: 'The provider’s redirect: deep-links ?token=, ?code= (opt-in hand-off) or ?error=',
          // Provider parameters vary; the whole query is validated by openid-client, not here.
          querystring: z.looseObject({ state: z.string().max(1024).optional() }),
          response: { 302: z.null().describe(`To ${config.appScheme}://auth/callback`) },
        },
      },
      async (request, reply) => {
        const oauthClient = clients.get(provider)
        if (!oauthClient) return fail(reply, 'provider_not_configured')
        const state = request.query.state
        // Taken (deleted) before anything else: a replayed or forged state finds nothing, whatever happens next.
        const flow = state === undefined ? undefined : await takeOAuthFlow(db, provider, state)
        if (!flow) return fail(reply, 'invalid_state')
        const queryStart = request.url.indexOf('?')
        const callbackUrl = new URL(`${config.publicUrl}/api/auth/${provider}/callback`)
        callbackUrl.search = queryStart === -1 ? '' : request.url.slice(queryStart)
        let identity: Awaited<ReturnType<OAuthClient['identify']>>
        try {
          identity = await oauthClient.identify(callbackUrl, flow)
        } catch (error) {
          request.log.warn({ provider, reason: reasonOf(error) }, 'OAuth sign-in failed')
          return fail(reply, error instanceof OAuthError ? error.code : 'server_error')
        }
        const user = await signInUser(
          db,
          { email: identity.email, provider, providerId: identity.subject, name: identity.name },
          config.defaultPlan,
        )
        if (user.blockedAt) return fail(reply, 'account_blocked')
        if (flow.appCodeChallenge !== null) {
          const code = await createExchangeCode(
            db,
            { userId: user.id, trust: provider, codeChallenge: flow.appCodeChallenge },
            config.signIn.exchangeCodeTtlSeconds,
          )
          return deepLink(reply, { code })
        }
        const { token } = await signIn(user, provider)
        return deepLink(reply, { token })
      },
    )
  }

  app.post(
    '/api/auth/exchange',
    {
      schema: {
        tags: ['auth'],
        summary: 'Exchange the one-time code of the opt-in hand-off for a session',
        description:
          'Single use, valid for ' +
          `${config.signIn.exchangeCodeTtlSeconds} s; \`code_verifier\` must answer the \`code_challenge\` ` +
          'the sign-in started with (S256).',
        body: z.strictObject({
          code: z.string().regex(BASE64URL_43, 'the code from the deep link'),
          code_verifier: z.string().regex(/^[A-Za-z0-9._~-]{43,128}$/, 'an RFC 7636 code verifier'),
        }),
        response: {
          200: SignInResponseSchema,
          400: ProblemSchema,
          401: ProblemSchema.describe('INVALID_CODE: unknown, used or expired code, or a wrong verifier'),
          429: ProblemSchema,
        },
      },
    },
    async (request) => {
      await limiters.verificationsPerIp(request)
      const grant = await redeemExchangeCode(db, request.body.code, request.body.code_verifier)
      const user = grant && (await findUser(db, grant.userId))
      if (!grant || !user || !TRUST_PROVIDERS.includes(grant.trust as TrustProvider)) {
        throw new ProblemError(401, 'INVALID_CODE', 'The code is unknown, used or expired, or the verifier is wrong')
      }
      return signIn(user, grant.trust as TrustProvider)
    },
  )
}

/** What went wrong, for the log: error names and messages only, never claims, tokens or codes. */
function reasonOf(error: unknown): Record<string, string> {
  if (!(error instanceof Error)) return { error: 'unknown' }
  const cause = error.cause instanceof Error ? error.cause : undefined
  return {
    error: error instanceof OAuthError ? error.code : error.name,
    message: error.message,
    ...(cause && { cause: `${cause.name}: ${cause.message}` }),
  }
}
