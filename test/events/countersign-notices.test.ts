// The opt-in e-mail of a countersignature, through a real SMTP server: an account that asked for it (PUT
// /api/account/notifications) hears once when someone else signs after one of its anchors, with both transactions and
// the chain's page, and never the other signer's address; one that did not ask, or stopped asking, hears nothing; a
// mail server that is down is tried again. The sender is driven by hand (WEBHOOK_DISPATCH_INTERVAL_MS=0).
import { txHashToBase64Url } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pruneWebhookLog } from '../../src/events/webhook-retention.ts'
import { type SmtpInbox, startSmtpInbox } from '../auth/smtp-inbox.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, query, relayMined } from '../relay/relay-helpers.ts'

const VERIFY_BASE_URL = 'https://verify.example'

async function setNotifications(t: TestApp, user: SignedInUser, body: object) {
  return t.app.inject({ method: 'PUT', url: '/api/account/notifications', headers: user.headers, payload: body })
}

/** Alice's anchor, countersigned by Bob once both are mined: the two transactions. */
async function countersigned(t: TestApp, alice: SignedInUser, bob: SignedInUser) {
  const aliceTx = await relayMined(t.app, alice.headers, newBody())
  const bobTx = await relayMined(t.app, bob.headers, newBody(aliceTx))
  return { aliceTx, bobTx }
}

/** The rows of Alice's notices: attempts made and whether it went. */
async function noticesOf(t: TestApp, user: SignedInUser) {
  return query<{ attempts: number; sent: boolean; due_later: boolean }>(
    t.database.handle.db,
    sql`SELECT attempts, sent_at IS NOT NULL AS sent, next_attempt_at > now() AS due_later
        FROM notice_emails WHERE user_id = ${user.id} ORDER BY event_seq`,
  )
}

describe('the countersignature e-mail', () => {
  let t: TestApp
  let inbox: SmtpInbox
  let alice: SignedInUser
  let bob: SignedInUser

  beforeAll(async () => {
    inbox = await startSmtpInbox()
    t = await createTestApp({
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        WEBHOOK_DISPATCH_INTERVAL_MS: '0',
        SMTP_URL: inbox.url,
        VERIFY_BASE_URL,
      },
    })
    alice = await signInTestUser(t)
    bob = await signInTestUser(t)
  })
  afterAll(async () => {
    await t?.close()
    await inbox?.close()
  })

  const mailsTo = (user: SignedInUser) => inbox.messages.filter((mail) => mail.to.includes(user.email))

  it('is off until asked for, and the setting is checked as a typed object', async () => {
    const read = await t.app.inject({ url: '/api/account/notifications', headers: alice.headers })
    expect(read.json()).toEqual({ countersigned: false })
    for (const bad of [{ countersigned: 'yes' }, {}, { countersigned: true, weekly: true }]) {
      const refused = await setNotifications(t, alice, bad)
      expect(refused.statusCode).toBe(400)
      expect(refused.headers['content-type']).toContain('application/problem+json')
    }
    expect((await t.app.inject({ url: '/api/account/notifications', headers: alice.headers })).json()).toEqual({
      countersigned: false,
    })
    expect((await t.app.inject({ method: 'PUT', url: '/api/account/notifications' })).statusCode).toBe(401)
  })

  it('tells an account that asked, once, naming both transactions and never the other signer', async () => {
    expect((await setNotifications(t, alice, { countersigned: true })).json()).toEqual({ countersigned: true })
    const { aliceTx, bobTx } = await countersigned(t, alice, bob)
    expect(await t.app.countersignNotices.tick()).toBe(1)
    expect(await t.app.countersignNotices.tick()).toBe(0)
    const [mail, ...more] = mailsTo(alice)
    expect(more).toEqual([])
    expect(mail!.raw).toContain('Subject: Someone signed after you')
    const body = mail!.raw.replace(/=\r?\n/g, '')
    expect(body).toContain(aliceTx)
    expect(body).toContain(bobTx)
    expect(body).toContain(`${VERIFY_BASE_URL}/v/${txHashToBase64Url(bobTx)}`)
    expect(body).not.toContain(bob.email)
    // Bob countersigned and asked for nothing: no mail to him.
    expect(mailsTo(bob)).toEqual([])
    const exported = await t.app.inject({ url: '/api/account/export', headers: alice.headers })
    expect(exported.json().account.notifications).toEqual({ countersigned: true })
  })

  it('does not tell an account that stopped asking, even of a countersignature recorded before', async () => {
    await setNotifications(t, alice, { countersigned: true })
    const sentBefore = mailsTo(alice).length
    await countersigned(t, alice, bob)
    expect((await setNotifications(t, alice, { countersigned: false })).json()).toEqual({ countersigned: false })
    await countersigned(t, alice, bob)
    expect(await t.app.countersignNotices.tick()).toBe(0)
    expect(mailsTo(alice)).toHaveLength(sentBefore)
  })

  it('tries again when the mail server does not take it', async () => {
    const carol = await signInTestUser(t)
    await setNotifications(t, carol, { countersigned: true })
    inbox.refusing = true
    try {
      await countersigned(t, carol, bob)
      expect(await t.app.countersignNotices.tick()).toBe(0)
    } finally {
      inbox.refusing = false
    }
    expect(await noticesOf(t, carol)).toEqual([{ attempts: 1, sent: false, due_later: true }])
    expect(await t.app.countersignNotices.tick()).toBe(0) // not due again yet
    // Due again (as a minute later): sent.
    await t.database.handle.db.execute(
      sql`UPDATE notice_emails SET next_attempt_at = now() WHERE user_id = ${carol.id}`,
    )
    expect(await t.app.countersignNotices.tick()).toBe(1)
    expect(await noticesOf(t, carol)).toEqual([{ attempts: 2, sent: true, due_later: false }])
    expect(mailsTo(carol)).toHaveLength(1)
  })

  it('is kept WEBHOOK_LOG_RETENTION_DAYS once sent or given up, and never pruned while it is still to be sent', async () => {
    const [sent, waiting] = [await signInTestUser(t), await signInTestUser(t)]
    for (const user of [sent, waiting]) await setNotifications(t, user, { countersigned: true })
    await countersigned(t, sent, bob)
    expect(await t.app.countersignNotices.tick()).toBe(1)
    inbox.refusing = true
    try {
      await countersigned(t, waiting, bob)
      await t.app.countersignNotices.tick()
    } finally {
      inbox.refusing = false
    }
    const db = t.database.handle.db
    await db.execute(
      sql`UPDATE events SET created_at = now() - interval '31 days'
          WHERE seq IN (SELECT event_seq FROM notice_emails WHERE user_id IN (${sent.id}, ${waiting.id}))`,
    )
    await pruneWebhookLog(db, t.config.webhooks.logRetentionDays)
    expect(await noticesOf(t, sent)).toEqual([])
    expect(await noticesOf(t, waiting)).toEqual([{ attempts: 1, sent: false, due_later: true }])
  })
})
