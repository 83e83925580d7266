import { createHash, randomBytes } from 'node:crypto'
import { Writable } from 'node:stream'
import { fileURLToPath } from 'node:url'
import { eq, sql } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import { decodeJwt } from 'jose'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config/load-config.ts'
import { magicLinks, sessions, users } from '../../src/db/schema.ts'
import { createTestApp, TEST_JWT_SECRET, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type SmtpInbox, startSmtpInbox } from './smtp-inbox.ts'

let chain: TestChain
let inbox: SmtpInbox
let t: TestApp

/** A fresh client address per test, so per-IP limits of one test never touch another. */
const newIp = () => `10.${randomBytes(3).join('.')}`
const newEmail = () => `user-${randomBytes(6).toString('hex')}@example.com`

async function requestCode(app: TestApp, email: string, ip = newIp()) {
  return app.app.inject({ method: 'POST', url: '/api/auth/magic-link', payload: { email }, remoteAddress: ip })
}

async function verify(app: TestApp, email: string, code: string, ip = newIp()) {
  return app.app.inject({
    method: 'POST',
    url: '/api/auth/magic-link/verify',
    payload: { email, code },
    remoteAddress: ip,
  })
}

async function sessionCount(app: TestApp): Promise<number> {
  const [row] = await app.database.handle.db.select({ n: sql<number>`count(*)::int` }).from(sessions)
  return row!.n
}

function otherCode(code: string): string {
  return String((Number(code) + 1) % 1_000_000).padStart(6, '0')
}

beforeAll(async () => {
  ;[chain, inbox] = await Promise.all([startTestChain(), startSmtpInbox()])
  t = await createTestApp({
    testChain: chain,
    env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sign-in <sign-in@example.com>', CODE_VERIFICATIONS_PER_IP_PER_HOUR: '12' },
  })
})
afterAll(async () => {
  await t?.close()
  await inbox?.close()
  await chain?.stop()
})

describe('POST /api/auth/magic-link', () => {
  it('mails a 6-digit code that signs in and creates the account on first use', async () => {
    const email = newEmail()
    const response = await requestCode(t, email.toUpperCase())
    expect(response.statusCode).toBe(202)
    expect(response.json()).toEqual({ sent: true })
    const code = await inbox.nextCode(email)
    expect(code).toMatch(/^\d{6}$/)
    expect(inbox.messages.find((m) => m.to.includes(email))!.raw).toMatch(/^From: "?Sign-in"? <sign-in@example\.com>/m)

    const signedIn = await verify(t, email, code)
    expect(signedIn.statusCode).toBe(200)
    const body = signedIn.json()
    expect(body.user).toEqual({ id: expect.any(String), email, name: null, authProvider: 'email', plan: 'free' })
    expect(Date.parse(body.expiresAt) - Date.now()).toBeGreaterThan(23.9 * 3600 * 1000)
    const claims = decodeJwt(body.token)
    expect(claims).toMatchObject({ sub: body.user.id, email, trust: 'email', verified: true })
    expect(claims.exp! - claims.iat!).toBe(24 * 3600)

    const me = await t.app.inject({ url: '/api/auth/me', headers: { authorization: `Bearer ${body.token}` } })
    expect(me.statusCode).toBe(200)
    expect(me.json().user).toEqual(body.user)
  })

  it('answers the same for an address with an account and one without', async () => {
    const known = newEmail()
    await t.database.handle.db.insert(users).values({ email: known })
    const unknown = newEmail()
    const a = await requestCode(t, known)
    const b = await requestCode(t, unknown)
    expect([a.statusCode, b.statusCode]).toEqual([202, 202])
    expect(a.body).toBe(b.body)
    expect(Object.keys(a.headers).sort()).toEqual(Object.keys(b.headers).sort())
    // Both get a code: nothing observable depends on the account existing.
    await inbox.nextCode(known)
    await inbox.nextCode(unknown)
  })

  it('stores only a keyed hash of the code', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    const rows = await t.database.handle.db.select().from(magicLinks).where(eq(magicLinks.email, email))
    expect(rows).toHaveLength(1)
    expect(rows[0]!.code).toMatch(/^[0-9a-f]{64}$/)
    expect(rows[0]!.code).not.toContain(code)
    expect(rows[0]!.code).not.toBe(createHash('sha256').update(code).digest('hex'))
  })

  it('makes a new code replace the older one', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const first = await inbox.nextCode(email)
    await requestCode(t, email)
    const second = await inbox.nextCode(email)
    if (first !== second) expect((await verify(t, email, first)).statusCode).toBe(401)
    expect((await verify(t, email, second)).statusCode).toBe(200)
  })

  it('rejects an invalid address with 400 and sends nothing', async () => {
    const before = inbox.messages.length
    const response = await requestCode(t, 'not-an-address')
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'email' }] })
    expect(inbox.messages.length).toBe(before)
  })

  it('sends at most 5 codes an hour to one address, then answers 429 with Retry-After', async () => {
    const email = newEmail()
    for (let i = 0; i < 5; i++) expect((await requestCode(t, email)).statusCode).toBe(202)
    for (let i = 0; i < 5; i++) await inbox.nextCode(email)
    const rowsBefore = await t.database.handle.db.select().from(magicLinks).where(eq(magicLinks.email, email))
    const limited = await requestCode(t, email)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ code: 'RATE_LIMITED', status: 429 })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(3500)
    const rowsAfter = await t.database.handle.db.select().from(magicLinks).where(eq(magicLinks.email, email))
    expect(rowsAfter).toEqual(rowsBefore)
    await expect(inbox.nextCode(email, 300)).rejects.toThrow(/no mail/)
  })

  it('answers 429 after 60 code requests from one IP', async () => {
    const ip = newIp()
    for (let i = 0; i < 60; i++) expect((await requestCode(t, newEmail(), ip)).statusCode).toBe(202)
    const limited = await requestCode(t, newEmail(), ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.headers['retry-after']).toBeDefined()
    expect((await requestCode(t, newEmail())).statusCode).toBe(202)
  })
})

describe('POST /api/auth/magic-link/verify', () => {
  it('accepts a code once: a replay gets 401 and no session', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    expect((await verify(t, email, code)).statusCode).toBe(200)
    const before = await sessionCount(t)
    const replay = await verify(t, email, code)
    expect(replay.statusCode).toBe(401)
    expect(replay.json()).toMatchObject({ code: 'INVALID_CODE' })
    expect(await sessionCount(t)).toBe(before)
  })

  it('kills a code after 5 wrong attempts: the right code then fails too', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    for (let i = 0; i < 5; i++) expect((await verify(t, email, otherCode(code))).statusCode).toBe(401)
    const before = await sessionCount(t)
    const sixth = await verify(t, email, code)
    expect(sixth.statusCode).toBe(401)
    expect(sixth.json()).toMatchObject({ code: 'INVALID_CODE' })
    expect(await sessionCount(t)).toBe(before)
    const [account] = await t.database.handle.db.select().from(users).where(eq(users.email, email))
    expect(account).toBeUndefined()
  })

  it('accepts the right code after 4 wrong ones', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    for (let i = 0; i < 4; i++) await verify(t, email, otherCode(code))
    expect((await verify(t, email, code)).statusCode).toBe(200)
  })

  it('refuses a code sent to another address, which keeps its code', async () => {
    const victim = newEmail()
    const attacker = newEmail()
    await requestCode(t, victim)
    const code = await inbox.nextCode(victim)
    const stolen = await verify(t, attacker, code)
    expect(stolen.statusCode).toBe(401)
    const [account] = await t.database.handle.db.select().from(users).where(eq(users.email, attacker))
    expect(account).toBeUndefined()
    expect((await verify(t, victim, code)).statusCode).toBe(200)
  })

  it('refuses an expired code', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    await t.database.handle.db
      .update(magicLinks)
      .set({ expiresAt: new Date(Date.now() - 1000) })
      .where(eq(magicLinks.email, email))
    expect((await verify(t, email, code)).statusCode).toBe(401)
  })

  it('lets exactly one of 10 parallel requests with the right code sign in', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    const before = await sessionCount(t)
    const answers = await Promise.all(Array.from({ length: 10 }, () => verify(t, email, code)))
    const statuses = answers.map((answer) => answer.statusCode).sort()
    expect(statuses).toEqual([200, ...Array(9).fill(401)])
    expect(await sessionCount(t)).toBe(before + 1)
    const accounts = await t.database.handle.db.select().from(users).where(eq(users.email, email))
    expect(accounts).toHaveLength(1)
  })

  it('lets no parallel burst of wrong guesses outlive the attempt limit', async () => {
    const email = newEmail()
    await requestCode(t, email)
    const code = await inbox.nextCode(email)
    // 11 parallel requests: 10 wrong guesses and the right code, in random order against the database.
    const guesses = Array.from({ length: 10 }, (_, i) => String((Number(code) + 1 + i) % 1_000_000).padStart(6, '0'))
    const answers = await Promise.all([...guesses, code].map((guess) => verify(t, email, guess)))
    const [row] = await t.database.handle.db.select().from(magicLinks).where(eq(magicLinks.email, email))
    expect(row!.used).toBe(true)
    const won = answers.filter((answer) => answer.statusCode === 200).length
    // The right code wins only if it reached the row before the fifth miss; never more than once.
    expect(won).toBeLessThanOrEqual(1)
    expect(row!.failedAttempts).toBeLessThanOrEqual(won === 1 ? 4 : 5)
  })

  it('rejects a malformed code with 400', async () => {
    const response = await verify(t, newEmail(), '12345a')
    expect(response.statusCode).toBe(400)
    expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED', errors: [{ path: 'code' }] })
  })

  it('answers 429 once one IP exceeds its verification attempts', async () => {
    const ip = newIp()
    for (let i = 0; i < 12; i++) expect((await verify(t, newEmail(), '000000', ip)).statusCode).toBe(401)
    const limited = await verify(t, newEmail(), '000000', ip)
    expect(limited.statusCode).toBe(429)
    expect(limited.json()).toMatchObject({ code: 'RATE_LIMITED' })
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
  })
})

describe('sign-in codes without SMTP', () => {
  it('writes the code to one dedicated log line in development, and nowhere else', async () => {
    const lines: string[] = []
    const logger = pino(
      { level: 'info' },
      new Writable({
        write(chunk, _encoding, done) {
          lines.push(String(chunk))
          done()
        },
      }),
    ) as FastifyBaseLogger
    const dev = await createTestApp({ testChain: chain, logger })
    try {
      const email = newEmail()
      expect((await requestCode(dev, email)).statusCode).toBe(202)
      const codeLines = lines.filter((line) => line.includes('Sign-in code for'))
      expect(codeLines).toHaveLength(1)
      const code = /Sign-in code for \S+: (\d{6})/.exec(codeLines[0]!)![1]!
      const signedIn = await verify(dev, email, code)
      expect(signedIn.statusCode).toBe(200)
      const token = signedIn.json().token as string
      expect(lines.filter((line) => line.includes(code))).toEqual(codeLines)
      expect(lines.some((line) => line.includes(token))).toBe(false)
    } finally {
      await dev.close()
    }
  })

  it('is refused in production: the configuration requires SMTP_URL', () => {
    const production = {
      NODE_ENV: 'production',
      JWT_SECRET: TEST_JWT_SECRET,
      DATABASE_URL: 'postgres://db.example/anchors',
      RPC_URL: 'https://rpc.example',
      RELAYER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
      CONTRACT_ADDRESS: `0x${'22'.repeat(20)}`,
      PUBLIC_URL: 'https://anchors.example',
      METRICS_TOKEN: 'm'.repeat(32),
      // The PDF signer's settings: read, not opened, by the configuration.
      PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
      PKCS11_TOKEN_LABEL: 'token',
      PKCS11_PIN: '1234',
      PDF_SIGNING_KEY_LABEL: 'pdf-signing',
      PDF_SIGNING_CERTIFICATES: fileURLToPath(import.meta.url),
      TSA_URL: 'https://tsa.example',
      TSA_TRUSTED_CERTIFICATES: fileURLToPath(import.meta.url),
    }
    expect(() => loadConfig(production)).toThrow(/SMTP_URL: required in production/)
    expect(() => loadConfig({ ...production, SMTP_URL: 'smtps://mail.example' })).not.toThrow()
    expect(() =>
      loadConfig({ ...production, SMTP_URL: 'smtps://mail.example', OAUTH_ALLOW_INSECURE_REQUESTS: 'true' }),
    ).toThrow(/OAUTH_ALLOW_INSECURE_REQUESTS/)
  })
})

describe('sign-in limits in Redis', () => {
  it('shares the per-address limit between two instances', async () => {
    const env = { SMTP_URL: inbox.url, REDIS_URL: 'redis://127.0.0.1:6379', CODE_SENDS_PER_EMAIL_PER_HOUR: '2' }
    const first = await createTestApp({ testChain: chain, env })
    const second = await createTestApp({ testChain: chain, env })
    try {
      const email = newEmail()
      expect((await requestCode(first, email)).statusCode).toBe(202)
      expect((await requestCode(second, email)).statusCode).toBe(202)
      const limited = await requestCode(first, email)
      expect(limited.statusCode).toBe(429)
      expect((await requestCode(second, email)).statusCode).toBe(429)
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(3500)
    } finally {
      await Promise.all([first.close(), second.close()])
    }
  })
})
