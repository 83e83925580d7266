import { createHmac, generateKeyPairSync } from 'node:crypto'
import { eq } from 'drizzle-orm'
import { SignJWT } from 'jose'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchorUsage, sessions, users } from '../../src/db/schema.ts'
import { createTestApp, type SignedInUser, signInTestUser, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts'

let t: TestApp
let user: SignedInUser

const secret = new TextEncoder().encode(TEST_JWT_SECRET)

function me(token: string) {
  return t.app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${token}` } })
}

/** Claims of a real session of `user`, for forged tokens that differ from a valid one in exactly one respect. */
function claims() {
  return { email: user.email, sid: user.sessionId, trust: 'email', verified: true }
}

function forge(
  options: { alg?: string; key?: Uint8Array; iss?: string; aud?: string; exp?: number; iat?: number } = {},
) {
  const now = Math.floor(Date.now() / 1000)
  return new SignJWT(claims())
    .setProtectedHeader({ alg: options.alg ?? 'HS256', typ: 'JWT' })
    .setSubject(user.id)
    .setIssuer(options.iss ?? t.config.jwt.issuer)
    .setAudience(options.aud ?? t.config.jwt.audience)
    .setIssuedAt(options.iat ?? now - 60)
    .setExpirationTime(options.exp ?? now + 3600)
    .sign(options.key ?? secret)
}

function base64url(value: object | string): string {
  return Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)).toString('base64url')
}

async function expectRejected(token: string) {
  const response = await me(token)
  expect(response.statusCode).toBe(401)
  expect(response.json()).toMatchObject({ code: 'UNAUTHENTICATED' })
  expect(response.headers['www-authenticate']).toBe('Bearer')
}

beforeAll(async () => {
  t = await createTestApp({ env: { PLANS: 'free:100,pro:5000' } })
  user = await signInTestUser(t)
})
afterAll(() => t?.close())

describe('GET /api/auth/me', () => {
  it('returns the user and the anchors used this UTC month against the plan', async () => {
    const now = new Date()
    const period = `${now.getUTCFullYear()}-${String(now.getUTCMonth() + 1).padStart(2, '0')}-01`
    await t.database.handle.db.insert(anchorUsage).values([
      { userId: user.id, period, used: 7 },
      { userId: user.id, period: '2000-01-01', used: 99 },
    ])
    await t.database.handle.db.update(users).set({ plan: 'pro', name: 'Ada' }).where(eq(users.id, user.id))
    const response = await me(user.token)
    expect(response.statusCode).toBe(200)
    expect(response.json()).toEqual({
      user: { id: user.id, email: user.email, name: 'Ada', authProvider: 'email', plan: 'pro' },
      usage: {
        used: 7,
        limit: 5000,
        resetsAt: new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString(),
      },
    })
  })

  it('answers 401 without a token', async () => {
    const response = await t.app.inject({ url: '/api/auth/me' })
    expect(response.statusCode).toBe(401)
  })

  it('accepts a token forged exactly as issued (the control for the attacks below)', async () => {
    expect((await me(await forge())).statusCode).toBe(200)
  })
})

describe('JWT attacks on a protected route', () => {
  it('rejects alg "none"', async () => {
    const now = Math.floor(Date.now() / 1000)
    const payload = {
      ...claims(),
      sub: user.id,
      iss: t.config.jwt.issuer,
      aud: t.config.jwt.audience,
      iat: now,
      exp: now + 3600,
    }
    await expectRejected(`${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.`)
    await expectRejected(`${base64url({ alg: 'none', typ: 'JWT' })}.${base64url(payload)}.${base64url('x')}`)
  })

  it('rejects HS256 signed with another key', async () => {
    await expectRejected(await forge({ key: new TextEncoder().encode('another-secret-that-is-32-bytes-long!!') }))
  })

  it('rejects an algorithm switch: HS512 with the same secret, and RS256', async () => {
    await expectRejected(await forge({ alg: 'HS512' }))
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
    const now = Math.floor(Date.now() / 1000)
    const rs256 = await new SignJWT(claims())
      .setProtectedHeader({ alg: 'RS256' })
      .setSubject(user.id)
      .setIssuer(t.config.jwt.issuer)
      .setAudience(t.config.jwt.audience)
      .setIssuedAt(now)
      .setExpirationTime(now + 3600)
      .sign(privateKey)
    await expectRejected(rs256)
    // The classic confusion: an RS256 header with an HMAC over the same bytes, keyed by the secret.
    const header = base64url({ alg: 'RS256', typ: 'JWT' })
    const body = rs256.split('.')[1]!
    const mac = createHmac('sha256', TEST_JWT_SECRET).update(`${header}.${body}`).digest('base64url')
    await expectRejected(`${header}.${body}.${mac}`)
  })

  it('rejects an expired token, beyond the 60 s clock tolerance', async () => {
    await expectRejected(await forge({ exp: Math.floor(Date.now() / 1000) - 120 }))
  })

  it('rejects a token issued in the future, or living longer than the 24 h this service issues, even with the real secret', async () => {
    const now = Math.floor(Date.now() / 1000)
    await expectRejected(await forge({ iat: now + 600, exp: now + 3600 }))
    await expectRejected(await forge({ iat: now - 60, exp: now + 365 * 24 * 3600 }))
    await expectRejected(await forge({ iat: now - 25 * 3600, exp: now + 3600 }))
    // Within the clock tolerance and the lifetime: accepted.
    expect((await me(await forge({ iat: now + 30, exp: now + 24 * 3600 }))).statusCode).toBe(200)
  })

  it('rejects a wrong audience or issuer', async () => {
    await expectRejected(await forge({ aud: 'some-other-app' }))
    await expectRejected(await forge({ iss: 'https://attacker.example' }))
  })

  it('rejects a tampered payload', async () => {
    const [header, , signature] = user.token.split('.')
    const payload = base64url({ ...claims(), sub: crypto.randomUUID(), iss: t.config.jwt.issuer })
    await expectRejected(`${header}.${payload}.${signature}`)
  })
})

describe('POST /api/auth/logout', () => {
  it('revokes the session at once: the same token gets 401 on the next request', async () => {
    const other = await signInTestUser(t)
    expect((await me(other.token)).statusCode).toBe(200)
    const logout = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: other.headers })
    expect(logout.statusCode).toBe(204)
    await expectRejected(other.token)
    const [row] = await t.database.handle.db.select().from(sessions).where(eq(sessions.id, other.sessionId))
    expect(row!.revokedAt).not.toBeNull()
    // Another session of the same user lives on.
    const second = await signInTestUser(t, other.email)
    expect((await me(second.token)).statusCode).toBe(200)
  })

  it('answers 401 for a revoked token and changes nothing', async () => {
    const other = await signInTestUser(t)
    await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: other.headers })
    const again = await t.app.inject({ method: 'POST', url: '/api/auth/logout', headers: other.headers })
    expect(again.statusCode).toBe(401)
  })

  it('ends every session of a deleted user', async () => {
    const doomed = await signInTestUser(t)
    await t.database.handle.db.delete(users).where(eq(users.id, doomed.id))
    const rows = await t.database.handle.db.select().from(sessions).where(eq(sessions.userId, doomed.id))
    expect(rows).toEqual([])
    // A fresh checker (another instance, or this one after its short cache) refuses the token.
    await expectRejected(doomed.token)
  })
})
