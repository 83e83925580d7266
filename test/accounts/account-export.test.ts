// GET /api/account/export: everything held about the caller in one document (account, plan and usage, sessions
// without tokens, signer certificates, anchors with ciphertexts and attestations, the library with its deletion
// markers), nothing of
// anyone else's, saved as a file, rate-limited.
import { createAnchorClient } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { type IssuedSignerCertificate, issueSignerCertificate } from '../helpers/pdf-signing/signer-certificate.ts'
import { at, signature, snippet } from '../library/fixtures.ts'
import { newBody, postRelay, query, randomHash } from '../relay/relay-helpers.ts'

describe('GET /api/account/export', () => {
  let t: TestApp
  let user: SignedInUser
  let other: SignedInUser
  const bodies = [newBody(), newBody()]
  const kept = signature({ label: 'Kept' })
  const removed = snippet({ label: 'Removed' })
  const txHashes: string[] = []
  let certificate: IssuedSignerCertificate

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
    user = await signInTestUser(t)
    other = await signInTestUser(t)
    for (const body of bodies) txHashes.push((await postRelay(t.app, user.headers, body)).json().txHash)
    // A third with the service's attestation (a salt sent with the relay).
    const attested = await postRelay(t.app, user.headers, { ...newBody(), salt: randomHash().slice(2) })
    expect(attested.statusCode).toBe(201)
    await postRelay(t.app, other.headers, newBody())
    const sync = (body: object) =>
      t.app.inject({ method: 'PUT', url: '/api/library/sync', headers: user.headers, payload: body })
    expect((await sync({ signatures: { upsert: [kept] }, snippets: { upsert: [removed] } })).statusCode).toBe(200)
    expect((await sync({ snippets: { delete: [{ id: removed.id, deletedAt: at(20) }] } })).statusCode).toBe(200)
    // A certificate of the service's CA for a key of the user's, and one for the other user's.
    certificate = await issueSignerCertificate(t.app, user.headers)
    await issueSignerCertificate(t.app, other.headers)
  })
  afterAll(async () => t?.close())

  const exported = (headers: Record<string, string>) =>
    t.app.inject({ method: 'GET', url: '/api/account/export', headers })

  it('holds the account, its usage, sessions, anchors and library, and nothing of anyone else', async () => {
    const response = await exported(user.headers)
    expect(response.statusCode).toBe(200)
    expect(response.headers['content-disposition']).toBe('attachment; filename="account-export.json"')
    expect(response.headers['cache-control']).toBe('no-store')
    const body = response.json()
    expect(body.account).toMatchObject({
      id: user.id,
      email: user.email,
      providerId: null,
      plan: 'free',
      monthlyLimit: null,
      blockedAt: null,
      usage: { used: 3 },
      usageHistory: [{ used: 3 }],
    })
    expect(body.operatorActions).toEqual([])
    // Its three confirmations, as GET /api/events tells them; none of the other user's.
    // The feed serves an event once the writers that began before it have ended (on a shared PostgreSQL, others' too).
    await expect
      .poll(async () => (await t.app.inject({ url: '/api/events', headers: user.headers })).json().events, {
        timeout: 15_000,
      })
      .toEqual(body.events)
    expect(body.events.map((event: { type: string }) => event.type)).toEqual(Array(3).fill('anchor.confirmed'))
    expect(body.sessions).toEqual([
      expect.objectContaining({ id: user.sessionId, revokedAt: null, expiresAt: expect.stringMatching(/Z$/) }),
    ])
    expect(body.signerCertificates).toEqual([
      {
        serialNumber: expect.stringMatching(/^[0-9a-f]{32}$/),
        certificate: certificate.certificate,
        createdAt: expect.stringMatching(/Z$/),
        notAfter: certificate.notAfter,
        revokedAt: null,
      },
    ])
    expect(body.anchors).toHaveLength(3)
    expect(body.anchors.slice(0, 2).map((a: { txHash: string }) => a.txHash)).toEqual(txHashes)
    expect(body.anchors[0]).toMatchObject({
      compositeHash: bodies[0]!.compositeHash,
      encryptedPayload: bodies[0]!.encryptedPayload,
      status: 'confirmed',
      attestation: null,
      pdfSignature: null,
    })
    expect(body.anchors[2].attestation).toMatchObject({ verified: true, identityCommitment: expect.any(String) })
    expect(body.library.signatures).toEqual([{ ...kept, deletedAt: null }])
    expect(body.library.snippets).toEqual([{ id: removed.id, deletedAt: at(20) }])
    // No token, not even the hash the session row keeps.
    const [session] = await query(t.database.handle.db, sql`SELECT token FROM sessions WHERE id = ${user.sessionId}`)
    expect(response.body).not.toContain(String((session as { token: string }).token))
    expect(response.body).not.toContain(user.token)
    const theirs = (await exported(other.headers)).json()
    expect(theirs.anchors).toHaveLength(1)
    expect(response.body).not.toContain(theirs.anchors[0].txHash)
  })

  it('is what the client package’s exportAccount() parses', async () => {
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' })
    const client = createAnchorClient({ baseUrl: url, token: user.token })
    const parsed = await client.exportAccount()
    expect({ ...parsed, exportedAt: '' }).toEqual({ ...(await exported(user.headers)).json(), exportedAt: '' })
  })

  it('answers 401 without a session and 429 past ten exports an hour', async () => {
    expect((await exported({})).statusCode).toBe(401)
    const someone = await signInTestUser(t)
    const statuses: number[] = []
    for (let i = 0; i < 11; i++) statuses.push((await exported(someone.headers)).statusCode)
    expect(statuses).toEqual([...Array(10).fill(200), 429])
  })
})
