// DELETE /api/account: after a recent sign-in, the account and everything it held go at once (sessions, library,
// codes, usage), its anchors stay verifiable from the chain with their ciphertexts and attestations erased, and an
// account made again with the address does not start the month's quota afresh.
import { randomUUID } from 'node:crypto'
import { createAnchorClient } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { deleteExpiredDeletedUsage } from '../../src/accounts/delete-account.ts'
import { issueToken } from '../../src/auth/jwt.ts'
import { hashToken, startSession } from '../../src/auth/sessions.ts'
import { emailHash, signInUser } from '../../src/auth/users.ts'
import { sessions } from '../../src/db/schema.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { issueSignerCertificate } from '../helpers/pdf-signing/signer-certificate.ts'
import { signature } from '../library/fixtures.ts'
import { newBody, postRelay, query, randomHash } from '../relay/relay-helpers.ts'

describe('DELETE /api/account', () => {
  let t: TestApp
  let user: SignedInUser
  const anchored: string[] = []

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
    user = await signInTestUser(t)
    anchored.push((await postRelay(t.app, user.headers, newBody())).json().txHash)
    const attested = await postRelay(t.app, user.headers, { ...newBody(), salt: randomHash().slice(2) })
    anchored.push(attested.json().txHash)
    const sync = await t.app.inject({
      method: 'PUT',
      url: '/api/library/sync',
      headers: user.headers,
      payload: { signatures: { upsert: [signature()] } },
    })
    expect(sync.statusCode).toBe(200)
    await query(
      t.database.handle.db,
      sql`INSERT INTO magic_links (email, code, expires_at) VALUES (${user.email}, ${randomUUID()}, now() + interval '10 minutes')`,
    )
  })
  afterAll(async () => t?.close())

  const remove = (headers: Record<string, string>) => t.app.inject({ method: 'DELETE', url: '/api/account', headers })
  const verify = (txHash: string) => t.app.inject({ method: 'GET', url: `/api/verify/${txHash}` })
  const countOf = async (statement: ReturnType<typeof sql>) =>
    Number(((await query(t.database.handle.db, statement))[0] as { n: unknown }).n)

  it('refuses a sign-in older than ten minutes with 403 REAUTHENTICATION_REQUIRED, and changes nothing', async () => {
    const { jwt } = t.app.deps
    const sessionId = randomUUID()
    const old = await issueToken(
      jwt,
      { sub: user.id, email: user.email, sid: sessionId, trust: 'email', verified: true },
      new Date(Date.now() - 11 * 60_000),
    )
    await t.database.handle.db.insert(sessions).values({
      id: sessionId,
      userId: user.id,
      token: hashToken(old.token),
      trust: 'email',
      expiresAt: old.expiresAt,
    })
    const response = await remove({ authorization: `Bearer ${old.token}` })
    expect(response.statusCode).toBe(403)
    expect(response.json()).toMatchObject({ code: 'REAUTHENTICATION_REQUIRED' })
    expect(await countOf(sql`SELECT count(*) AS n FROM users WHERE id = ${user.id}`)).toBe(1)
    expect((await verify(anchored[0]!)).json().encryptedPayload).not.toBeNull()
  })

  it('deletes the account, its sessions, library and codes, and erases what its anchors held', async () => {
    // Cached before the deletion: the erasure must reach the cached answers too.
    const before = (await verify(anchored[1]!)).json()
    expect(before).toMatchObject({ payloadErased: false, attestation: { verified: true } })
    expect(before.encryptedPayload).not.toBeNull()

    // A certificate of the service's CA for a key of the user's: revoked with the account, and forgotten but for its
    // serial, validity and revocation.
    const issued = await issueSignerCertificate(t.app, user.headers)

    // Through the client package, as the app deletes.
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    await createAnchorClient({ baseUrl: url, token: user.token }).deleteAccount()
    const [certificate] = await query(
      t.database.handle.db,
      sql`SELECT user_id, certificate, revoked_at, revocation_reason FROM signer_certificates
          WHERE serial = ${issued.serialNumber}`,
    )
    expect(certificate).toMatchObject({ user_id: null, certificate: null, revocation_reason: 'deleted' })
    expect(certificate!.revoked_at).not.toBeNull()

    expect((await t.app.inject({ method: 'GET', url: '/api/auth/me', headers: user.headers })).statusCode).toBe(401)
    for (const table of ['users', 'sessions', 'cloud_signatures', 'anchor_usage']) {
      const column = table === 'users' ? 'id' : 'user_id'
      expect(
        await countOf(sql`SELECT count(*) AS n FROM ${sql.raw(table)} WHERE ${sql.raw(column)} = ${user.id}`),
      ).toBe(0)
    }
    expect(await countOf(sql`SELECT count(*) AS n FROM magic_links WHERE email = ${user.email}`)).toBe(0)
    const rows = await query(
      t.database.handle.db,
      sql`SELECT encrypted_payload, identity_commitment, payload_erased_at, user_id FROM anchors
          WHERE tx_hash IN (${anchored[0]}, ${anchored[1]})`,
    )
    expect(rows).toHaveLength(2)
    for (const row of rows) {
      expect(row).toMatchObject({ encrypted_payload: null, identity_commitment: null, user_id: null })
      expect(row.payload_erased_at).not.toBeNull()
    }
    for (const txHash of anchored) {
      const after = await verify(txHash)
      expect(after.statusCode).toBe(200)
      expect(after.json()).toMatchObject({ txHash, encryptedPayload: null, payloadErased: true, attestation: null })
    }
    expect((await verify(anchored[1]!)).json().compositeHash).toBe(before.compositeHash)
    expect((await remove(user.headers)).statusCode).toBe(401)
  })

  it('starts an account made again with the address from the month’s usage it had', async () => {
    const again = await signInUser(t.app.deps.database.db, { email: user.email, provider: 'email' }, 'free')
    expect(again.id).not.toBe(user.id)
    const session = await startSession(t.app.deps.database.db, t.app.deps.jwt, again, 'email')
    const me = await t.app.inject({
      method: 'GET',
      url: '/api/auth/me',
      headers: { authorization: `Bearer ${session.token}` },
    })
    expect(me.json().usage.used).toBe(2)
    // And its anchors are its own from now on: none of the deleted account's.
    const history = await t.app.inject({
      method: 'GET',
      url: '/api/anchors',
      headers: { authorization: `Bearer ${session.token}` },
    })
    expect(history.json()).toEqual({ anchors: [], nextCursor: null })
  })

  it('drops deleted accounts’ usage of past months, and keeps this month’s', async () => {
    const db = t.app.deps.database.db
    await query(db, sql`INSERT INTO deleted_account_usage (email_hash, period, used) VALUES ('old', '2000-01-01', 7)`)
    await deleteExpiredDeletedUsage(db)
    const left = await query(db, sql`SELECT email_hash FROM deleted_account_usage ORDER BY email_hash`)
    expect(left).toEqual([{ email_hash: emailHash(user.email) }])
  })
})
