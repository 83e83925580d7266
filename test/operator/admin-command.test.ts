// `npm run admin -- users …` against the service's database while it runs: every action takes effect at the service's
// next request (a block at once, announced through Redis to the instance's session cache), is audited with the state
// before and after and the operator's name, and bad input changes nothing.
import { createHash, randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import { Redis } from 'ioredis'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { buildApp } from '../../src/api/app.ts'
import type { AppInstance } from '../../src/api/app-types.ts'
import { createExchangeCode } from '../../src/auth/exchange-codes.ts'
import { cacheKey } from '../../src/auth/sessions.ts'
import { emailHash } from '../../src/auth/users.ts'
import { type AdminTarget, runAdminCommand } from '../../src/operator/admin-command.ts'
import { announce, CHANNELS } from '../../src/redis-announcements.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { issueSignerCertificate } from '../helpers/pdf-signing/signer-certificate.ts'
import { capturedOutput } from '../helpers/processes/captured-output.ts'
import { newBody, postRelay, query } from '../relay/relay-helpers.ts'

const REDIS_URL = 'redis://127.0.0.1:6379'

let t: TestApp
/** A second instance of the service on the same database and Redis, with its own cache of live sessions. */
let second: AppInstance
let redis: Redis
let user: SignedInUser
/** The user's first anchor. */
let anchoredTx: string

beforeAll(async () => {
  t = await createTestApp({
    env: {
      REDIS_URL,
      VERIFY_REDIS_KEY_PREFIX: `admin-test-${randomBytes(4).toString('hex')}:`,
      PLANS: 'free:100,pro:1000',
      RELAY_MONITOR_INTERVAL_MS: '0',
      RELAY_WAIT_MS: '5000',
    },
  })
  second = await buildApp({
    config: t.config,
    database: t.database.handle,
    chain: t.chain,
    logger: pino({ level: 'silent' }) as FastifyBaseLogger,
  })
  await second.ready()
  redis = new Redis(REDIS_URL)
  user = await signInTestUser(t)
})
afterAll(async () => {
  await second?.close()
  redis?.disconnect()
  await t?.close()
})

/** Runs the command on the running service's database, announcing on the Redis the service listens to. */
async function admin(...argv: string[]) {
  const output = capturedOutput()
  const target: AdminTarget = {
    db: t.database.handle.db,
    plans: { free: 100, pro: 1000 },
    defaultPlan: 'free',
    async announceEnded(userId, sessionIds) {
      for (const sessionId of sessionIds) await announce(redis, CHANNELS.sessionEnded, cacheKey(sessionId, userId))
    },
    async announceErased(txHashes) {
      for (const txHash of txHashes) await announce(redis, CHANNELS.payloadErased, txHash)
    },
    close: async () => {},
  }
  const { stdout, stderr } = output
  const code = await runAdminCommand(argv, { stdout, stderr, open: async () => target })
  return { code, ...output.text() }
}

const me = (headers = user.headers, app: AppInstance = t.app) =>
  app.inject({ method: 'GET', url: '/api/auth/me', headers })
const audits = async () =>
  (await query(
    t.database.handle.db,
    sql`SELECT operator, action, before, after FROM operator_audit WHERE user_id = ${user.id} ORDER BY at, id`,
  )) as { operator: string; action: string; before: Record<string, unknown>; after: Record<string, unknown> | null }[]

describe('npm run admin -- users', () => {
  it('shows an account by e-mail or id', async () => {
    const relayed = await postRelay(t.app, user.headers, newBody())
    expect(relayed.statusCode).toBe(201)
    anchoredTx = relayed.json().txHash
    const shown = await admin('users', 'show', user.email.toUpperCase())
    expect(shown.code).toBe(0)
    expect(shown.stdout).toContain(`${user.email}  ${user.id}`)
    expect(shown.stdout).toMatch(/usage {5}1 of 100 \(plan\)/)
    const json = JSON.parse((await admin('users', 'show', user.id, '--json')).stdout)
    expect(json).toMatchObject({
      id: user.id,
      plan: 'free',
      monthlyLimit: null,
      blockedAt: null,
      liveSessions: 1,
      anchors: { confirmed: 1 },
      usage: { used: 1, limit: 100 },
    })
  })

  it('sets the plan and a limit of the user’s own, in force at the next relay', async () => {
    expect((await admin('users', 'plan', user.email, 'pro', '--operator', 'ada')).code).toBe(0)
    expect((await me()).json().usage.limit).toBe(1000)
    expect((await admin('users', 'limit', user.email, '2', '--operator', 'ada')).code).toBe(0)
    expect((await me()).json().usage.limit).toBe(2)
    expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    const over = await postRelay(t.app, user.headers, newBody())
    expect(over.statusCode).toBe(429)
    expect(over.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: 2, used: 2 })
    expect((await admin('users', 'limit', user.email, 'plan', '--operator', 'ada')).code).toBe(0)
    expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
  })

  it('blocks at once on every instance (sign-in and every session answer 403 ACCOUNT_BLOCKED) and unblocks', async () => {
    // The session is now in both instances' caches of live ones, which they trust for 5 s.
    expect((await me()).statusCode).toBe(200)
    expect((await me(user.headers, second)).statusCode).toBe(200)
    const issued = await issueSignerCertificate(t.app, user.headers)
    expect((await admin('users', 'block', user.email, '--operator', 'grace')).code).toBe(0)
    // Its signer certificates are revoked for good.
    const [certificate] = await query(
      t.database.handle.db,
      sql`SELECT revocation_reason FROM signer_certificates WHERE serial = ${issued.serialNumber}`,
    )
    expect(certificate).toEqual({ revocation_reason: 'blocked' })
    await expect.poll(async () => (await me()).statusCode, { timeout: 2_000, interval: 20 }).toBe(403)
    await expect
      .poll(async () => (await me(user.headers, second)).statusCode, { timeout: 2_000, interval: 20 })
      .toBe(403)
    expect((await me()).json().code).toBe('ACCOUNT_BLOCKED')
    expect((await postRelay(t.app, user.headers, newBody())).json().code).toBe('ACCOUNT_BLOCKED')
    // A sign-in completing now (an OAuth exchange) is refused too.
    const verifier = randomBytes(32).toString('base64url')
    const codeChallenge = createHash('sha256').update(verifier).digest('base64url')
    const code = await createExchangeCode(t.database.handle.db, { userId: user.id, trust: 'google', codeChallenge }, 60)
    const exchanged = await t.app.inject({
      method: 'POST',
      url: '/api/auth/exchange',
      payload: { code, code_verifier: verifier },
    })
    expect(exchanged.statusCode).toBe(403)
    expect(exchanged.json().code).toBe('ACCOUNT_BLOCKED')

    expect((await admin('users', 'unblock', user.email, '--operator', 'grace')).code).toBe(0)
    expect((await me()).statusCode).toBe(200)
    expect((await me(user.headers, second)).statusCode).toBe(200)
  })

  it('revokes every session at once, and deletes the account', async () => {
    expect((await me(user.headers, second)).statusCode).toBe(200)
    expect((await admin('users', 'revoke-sessions', user.id, '--operator', 'grace')).code).toBe(0)
    await expect.poll(async () => (await me()).statusCode, { timeout: 2_000, interval: 20 }).toBe(401)
    await expect
      .poll(async () => (await me(user.headers, second)).statusCode, { timeout: 2_000, interval: 20 })
      .toBe(401)
    const again = await signInTestUser(t, user.email)
    expect((await me(again.headers)).statusCode).toBe(200)
    // Both instances hold a verification of the user's anchor, with its ciphertext.
    const verify = (app: AppInstance) => app.inject({ method: 'GET', url: `/api/verify/${anchoredTx}` })
    for (const app of [t.app, second]) expect((await verify(app)).json().encryptedPayload).toEqual(expect.any(String))
    expect((await admin('users', 'delete', user.email, '--operator', 'grace')).code).toBe(0)
    for (const app of [t.app, second]) {
      await expect
        .poll(async () => (await verify(app)).json().payloadErased, { timeout: 2_000, interval: 20 })
        .toBe(true)
      expect((await verify(app)).json().encryptedPayload).toBeNull()
    }
    await expect.poll(async () => (await me(again.headers)).statusCode, { timeout: 2_000, interval: 20 }).toBe(401)
    expect((await admin('users', 'show', user.email)).code).toBe(1)
  })

  it('recorded every change: what, before and after, by whom', async () => {
    const records = await audits()
    expect(records.map((r) => [r.action, r.operator])).toEqual([
      ['plan', 'ada'],
      ['limit', 'ada'],
      ['limit', 'ada'],
      ['block', 'grace'],
      ['unblock', 'grace'],
      ['revoke-sessions', 'grace'],
      ['delete', 'grace'],
    ])
    expect(records[0]).toMatchObject({ before: { plan: 'free' }, after: { plan: 'pro' } })
    expect(records[1]).toMatchObject({ before: { monthlyLimit: null }, after: { monthlyLimit: 2 } })
    expect(records[3]!.after).toMatchObject({ blockedAt: expect.stringMatching(/Z$/) })
    expect(records[5]).toMatchObject({ before: { liveSessions: 1 }, after: { liveSessions: 0 } })
    expect(records[6]).toMatchObject({ before: { plan: 'pro' }, after: null })
    // The account is gone: its records keep the address's hash only.
    const emails = await query(
      t.database.handle.db,
      sql`SELECT DISTINCT user_email FROM operator_audit WHERE user_id = ${user.id}`,
    )
    expect(emails).toEqual([{ user_email: emailHash(user.email) }])
  })

  it('refuses bad input with exit 2 and the usage, and changes nothing', async () => {
    const someone = await signInTestUser(t)
    for (const argv of [
      ['accounts', 'show', someone.email],
      ['users', 'promote', someone.email, '--operator', 'x'],
      ['users', 'plan', someone.email, 'platinum', '--operator', 'x'],
      ['users', 'plan', someone.email, 'constructor', '--operator', 'x'],
      ['users', 'plan', someone.email],
      ['users', 'limit', someone.email, '-1', '--operator', 'x'],
      ['users', 'limit', someone.email, '1.5', '--operator', 'x'],
      ['users', 'block', someone.email],
      ['users', 'block', someone.email, 'now', '--operator', 'x'],
      ['users', 'block', someone.email, '--operatr', 'x'],
    ]) {
      const run = await admin(...argv)
      expect(run.code, argv.join(' ')).toBe(2)
      expect(run.stderr, argv.join(' ')).toMatch(/^admin: /)
    }
    expect((await admin('users', 'block', 'nobody@example.com', '--operator', 'x')).code).toBe(1)
    const [row] = await query(
      t.database.handle.db,
      sql`SELECT plan, monthly_limit, blocked_at, (SELECT count(*) FROM operator_audit WHERE user_id = ${someone.id}) AS audits
          FROM users WHERE id = ${someone.id}`,
    )
    expect(row).toMatchObject({ plan: 'free', monthly_limit: null, blocked_at: null })
    expect(Number((row as { audits: unknown }).audits)).toBe(0)
  })
})
