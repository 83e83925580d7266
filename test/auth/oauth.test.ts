import { createHash, randomBytes } from 'node:crypto'
import { eq, sql } from 'drizzle-orm'
import { decodeJwt } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { authExchangeCodes, oauthFlows, sessions, users } from '../../src/db/schema.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { TestBrowser } from './browser.ts'
import { type StandIn, startStandIn, type TestAccount } from './oidc-stand-in.ts'

const APP_ORIGIN = 'http://127.0.0.1:3000'
const TENANT = '72f988bf-86f1-41af-91ab-2d7cd011db47'

let t: TestApp
let google: StandIn
let microsoft: StandIn

const account = (extra: Partial<TestAccount> = {}): TestAccount => ({
  sub: randomBytes(8).toString('hex'),
  email: `oauth-${randomBytes(6).toString('hex')}@example.com`,
  email_verified: true,
  name: 'Grace Hopper',
  ...extra,
})

function browser() {
  return new TestBrowser(t.app, APP_ORIGIN, 'docanchor')
}

async function count(table: typeof sessions | typeof oauthFlows | typeof authExchangeCodes | typeof users) {
  const [row] = await t.database.handle.db.select({ n: sql<number>`count(*)::int` }).from(table)
  return row!.n
}

function pkcePair() {
  const verifier = randomBytes(32).toString('base64url')
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') }
}

function exchange(code: string, codeVerifier?: string) {
  return t.app.inject({
    method: 'POST',
    url: '/api/auth/exchange',
    payload: codeVerifier === undefined ? { code } : { code, code_verifier: codeVerifier },
  })
}

/** Follows the sign-in up to the service's callback, without visiting it. */
async function reachCallback(provider: 'google' | 'microsoft', query = '') {
  const journey = await browser().follow(`${APP_ORIGIN}/api/auth/${provider}${query}`, {
    stopAt: (url) => url.origin === APP_ORIGIN && url.pathname.endsWith('/callback'),
  })
  return journey.deepLink
}

beforeAll(async () => {
  const common = { clientSecret: 'stand-in-client-secret-0123456789' }
  ;[google, microsoft] = await Promise.all([
    startStandIn(
      { ...common, clientId: 'google-client', redirectUri: `${APP_ORIGIN}/api/auth/google/callback` },
      account(),
    ),
    startStandIn(
      {
        ...common,
        clientId: 'microsoft-client',
        redirectUri: `${APP_ORIGIN}/api/auth/microsoft/callback`,
        tenant: TENANT,
      },
      account({ tid: TENANT }),
    ),
  ])
  t = await createTestApp({
    env: {
      PUBLIC_URL: APP_ORIGIN,
      APP_SCHEME: 'docanchor',
      OAUTH_ALLOW_INSECURE_REQUESTS: 'true',
      GOOGLE_ISSUER: google.configuredIssuer,
      GOOGLE_CLIENT_ID: 'google-client',
      GOOGLE_CLIENT_SECRET: common.clientSecret,
      MICROSOFT_ISSUER: microsoft.configuredIssuer,
      MICROSOFT_CLIENT_ID: 'microsoft-client',
      MICROSOFT_CLIENT_SECRET: common.clientSecret,
      // The stand-in's tenant (in another case) and the one a forged token names below, so that the issuer check is
      // what refuses that token.
      MICROSOFT_ALLOWED_TENANTS: `c0ffee00-0000-4000-8000-000000000000, ${TENANT.toUpperCase()}`,
    },
  })
})
afterAll(async () => {
  await t?.close()
  await Promise.all([google?.close(), microsoft?.close()])
})

describe('GET /api/auth/google', () => {
  it('redirects to the provider with PKCE (S256), state and nonce', async () => {
    const response = await t.app.inject({ url: '/api/auth/google' })
    expect(response.statusCode).toBe(302)
    const location = new URL(response.headers.location as string)
    expect(location.origin).toBe(new URL(google.configuredIssuer).origin)
    expect(location.searchParams.get('code_challenge_method')).toBe('S256')
    expect(location.searchParams.get('code_challenge')).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(location.searchParams.get('state')).toBeTruthy()
    expect(location.searchParams.get('nonce')).toBeTruthy()
    expect(location.searchParams.get('redirect_uri')).toBe(`${APP_ORIGIN}/api/auth/google/callback`)
    // Only the hash of the state is stored.
    const state = location.searchParams.get('state')!
    const [row] = await t.database.handle.db
      .select()
      .from(oauthFlows)
      .where(eq(oauthFlows.stateHash, createHash('sha256').update(state).digest('hex')))
    expect(row).toBeDefined()
    expect(JSON.stringify(row)).not.toContain(state)
  })

  it('signs in end to end and deep-links the JWT (trust google), creating the account', async () => {
    google.account = account()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google`)
    expect(`${deepLink.protocol}//${deepLink.host}${deepLink.pathname}`).toBe('docanchor://auth/callback')
    const token = deepLink.searchParams.get('token')!
    const claims = decodeJwt(token)
    expect(claims).toMatchObject({ email: google.account.email, trust: 'google', verified: true })
    const me = await t.app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } })
    expect(me.json().user).toMatchObject({ email: google.account.email, name: 'Grace Hopper', authProvider: 'google' })
    const [row] = await t.database.handle.db.select().from(users).where(eq(users.email, google.account.email))
    expect(row!.providerId).toBe(google.account.sub)
  })

  it('signs in an existing e-mail account with the same address', async () => {
    google.account = account({ email: `Mixed-${randomBytes(4).toString('hex')}@Example.com` })
    const [existing] = await t.database.handle.db
      .insert(users)
      .values({ email: google.account.email.toLowerCase() })
      .returning()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google`)
    expect(decodeJwt(deepLink.searchParams.get('token')!).sub).toBe(existing!.id)
  })

  it('refuses an address the provider has not verified', async () => {
    google.account = account({ email_verified: false })
    const before = await count(users)
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google`)
    expect(deepLink.searchParams.get('error')).toBe('email_not_verified')
    expect(deepLink.searchParams.has('token')).toBe(false)
    expect(await count(users)).toBe(before)
  })
})

describe('GET /api/auth/microsoft (multi-tenant issuer)', () => {
  it('validates iss against the token’s tid and deep-links the JWT (trust microsoft)', async () => {
    microsoft.account = account({ tid: TENANT })
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/microsoft`)
    const token = deepLink.searchParams.get('token')
    expect(token, deepLink.href).toBeTruthy()
    expect(decodeJwt(token!)).toMatchObject({ email: microsoft.account.email, trust: 'microsoft' })
  })

  it('refuses a token whose tid names another tenant than its issuer', async () => {
    microsoft.account = account({ tid: 'c0ffee00-0000-4000-8000-000000000000' })
    const before = await count(sessions)
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/microsoft`)
    expect(deepLink.searchParams.get('error')).toBe('invalid_response')
    expect(await count(sessions)).toBe(before)
  })

  it('refuses a token without tid', async () => {
    microsoft.account = account({ tid: undefined })
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/microsoft`)
    expect(deepLink.searchParams.get('error')).toBe('invalid_response')
  })

  it('refuses a genuine account of a tenant not on MICROSOFT_ALLOWED_TENANTS, creating nothing', async () => {
    const restricted = await createTestApp({
      testChain: t.testChain,
      env: {
        PUBLIC_URL: APP_ORIGIN,
        APP_SCHEME: 'docanchor',
        OAUTH_ALLOW_INSECURE_REQUESTS: 'true',
        MICROSOFT_ISSUER: microsoft.configuredIssuer,
        MICROSOFT_CLIENT_ID: 'microsoft-client',
        MICROSOFT_CLIENT_SECRET: 'stand-in-client-secret-0123456789',
        MICROSOFT_ALLOWED_TENANTS: 'c0ffee00-0000-4000-8000-000000000001',
      },
    })
    try {
      microsoft.account = account({ tid: TENANT })
      const { deepLink } = await new TestBrowser(restricted.app, APP_ORIGIN, 'docanchor').follow(
        `${APP_ORIGIN}/api/auth/microsoft`,
      )
      expect(deepLink.searchParams.get('error')).toBe('access_denied')
      expect(deepLink.searchParams.has('token')).toBe(false)
      const [row] = await restricted.database.handle.db.select({ n: sql<number>`count(*)::int` }).from(users)
      expect(row!.n).toBe(0)
    } finally {
      await restricted.close()
    }
  })
})

describe('OAuth callback attacks', () => {
  it('refuses a replayed callback (state is single use) and creates no second session', async () => {
    google.account = account()
    const callback = await reachCallback('google')
    const b = browser()
    const first = await b.get(callback)
    expect(new URL(first.location!).searchParams.has('token')).toBe(true)
    const before = await count(sessions)
    const replay = await b.get(callback)
    expect(new URL(replay.location!).searchParams.get('error')).toBe('invalid_state')
    expect(await count(sessions)).toBe(before)
  })

  it('refuses a tampered or missing state, and leaves the real flow usable', async () => {
    google.account = account()
    const callback = await reachCallback('google')
    const before = await count(sessions)
    const tampered = new URL(callback)
    tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`)
    const forged = await browser().get(tampered)
    expect(new URL(forged.location!).searchParams.get('error')).toBe('invalid_state')
    const missing = new URL(callback)
    missing.searchParams.delete('state')
    expect(new URL((await browser().get(missing)).location!).searchParams.get('error')).toBe('invalid_state')
    expect(await count(sessions)).toBe(before)
    const real = await browser().get(callback)
    expect(new URL(real.location!).searchParams.has('token')).toBe(true)
  })

  it('refuses a state from the other provider', async () => {
    google.account = account()
    const callback = await reachCallback('google')
    const crossed = new URL(callback)
    crossed.pathname = '/api/auth/microsoft/callback'
    expect(new URL((await browser().get(crossed)).location!).searchParams.get('error')).toBe('invalid_state')
  })

  it('refuses an authorization code injected into another flow (PKCE and nonce bind the code to its flow)', async () => {
    google.account = account()
    const victim = await reachCallback('google')
    const attacker = await reachCallback('google')
    const spliced = new URL(victim)
    spliced.searchParams.set('code', attacker.searchParams.get('code')!)
    const before = await count(sessions)
    const answer = await browser().get(spliced)
    expect(new URL(answer.location!).searchParams.get('error')).toBe('invalid_response')
    expect(await count(sessions)).toBe(before)
  })

  it('deep-links the provider’s access_denied', async () => {
    const start = await t.app.inject({ url: '/api/auth/google' })
    const state = new URL(start.headers.location as string).searchParams.get('state')!
    const answer = await browser().get(
      new URL(`${APP_ORIGIN}/api/auth/google/callback?error=access_denied&state=${state}`),
    )
    expect(new URL(answer.location!).searchParams.get('error')).toBe('access_denied')
  })
})

describe('opt-in hand-off: POST /api/auth/exchange', () => {
  it('deep-links a one-time code instead of the JWT, exchanged once with the PKCE verifier', async () => {
    microsoft.account = account({ tid: TENANT })
    const pkce = pkcePair()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/microsoft?code_challenge=${pkce.challenge}`)
    expect(deepLink.searchParams.has('token')).toBe(false)
    const code = deepLink.searchParams.get('code')!
    expect(code).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const sessionsBefore = await count(sessions)

    const response = await exchange(code, pkce.verifier)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.user).toMatchObject({ email: microsoft.account.email, authProvider: 'microsoft' })
    expect(decodeJwt(body.token)).toMatchObject({ trust: 'microsoft', sub: body.user.id })
    expect(await count(sessions)).toBe(sessionsBefore + 1)

    const replay = await exchange(code, pkce.verifier)
    expect(replay.statusCode).toBe(401)
    expect(replay.json()).toMatchObject({ code: 'INVALID_CODE' })
    expect(await count(sessions)).toBe(sessionsBefore + 1)
  })

  it('refuses a wrong or missing verifier and keeps the code for the real app', async () => {
    google.account = account()
    const pkce = pkcePair()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google?code_challenge=${pkce.challenge}`)
    const code = deepLink.searchParams.get('code')!
    const before = await count(sessions)
    const wrong = await exchange(code, pkcePair().verifier)
    expect(wrong.statusCode).toBe(401)
    const missing = await exchange(code)
    expect(missing.statusCode).toBe(400)
    expect(missing.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'code_verifier' }] })
    expect(await count(sessions)).toBe(before)
    expect((await exchange(code, pkce.verifier)).statusCode).toBe(200)
  })

  it('lets exactly one of several parallel exchanges of one code succeed', async () => {
    google.account = account()
    const pkce = pkcePair()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google?code_challenge=${pkce.challenge}`)
    const code = deepLink.searchParams.get('code')!
    const answers = await Promise.all(Array.from({ length: 6 }, () => exchange(code, pkce.verifier)))
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([200, 401, 401, 401, 401, 401])
  })

  it('refuses an expired code', async () => {
    google.account = account()
    const pkce = pkcePair()
    const { deepLink } = await browser().follow(`${APP_ORIGIN}/api/auth/google?code_challenge=${pkce.challenge}`)
    await t.database.handle.db.update(authExchangeCodes).set({ expiresAt: new Date(Date.now() - 1000) })
    expect((await exchange(deepLink.searchParams.get('code')!, pkce.verifier)).statusCode).toBe(401)
  })

  it('rejects a malformed code_challenge with 400', async () => {
    const before = await count(oauthFlows)
    const response = await t.app.inject({ url: '/api/auth/google?code_challenge=short' })
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' })
    expect(await count(oauthFlows)).toBe(before)
  })
})

describe('an unconfigured provider', () => {
  it('deep-links provider_not_configured', async () => {
    const bare = await createTestApp({ testChain: t.testChain })
    try {
      const response = await bare.app.inject({ url: '/api/auth/google' })
      expect(response.statusCode).toBe(302)
      expect(response.headers.location).toBe('docanchor://auth/callback?error=provider_not_configured')
    } finally {
      await bare.close()
    }
  })
})
