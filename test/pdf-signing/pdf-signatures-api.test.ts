// POST /api/pdf-signatures on anvil: the service signs the digest a client computed, for the caller's own confirmed
// anchor only, once per anchor (the same request answers the same CMS, another digest is refused), within the
// signing window, and keeps nothing when no time-stamping authority answers.
import { checkCmsSignature, pemCertificates } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { certificateOf } from '../../packages/client/src/pdf/cms/der.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { type OpensslTsa, startOpensslTsa } from '../helpers/openssl-tsa.ts'
import { newBody, postRelay, query, relayMined, rpc } from '../relay/relay-helpers.ts'

const CONTENT = new TextEncoder().encode('a PDF byte range the service never sees')

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return Buffer.from(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex')
}

function postSignature(t: TestApp, user: SignedInUser | undefined, body: unknown) {
  return t.app.inject({
    method: 'POST',
    url: '/api/pdf-signatures',
    headers: user?.headers ?? {},
    payload: body as object,
  })
}

const anchored = (t: TestApp, user: SignedInUser) => relayMined(t.app, user.headers, newBody())

/** PDF signatures the service keeps. */
const kept = async (t: TestApp) =>
  Number((await query<{ n: unknown }>(t.database.handle.db, sql`SELECT count(*) AS n FROM pdf_signatures`))[0]!.n)

describe('POST /api/pdf-signatures', () => {
  let t: TestApp
  let ada: SignedInUser
  let bob: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_WAIT_MS: '300' } })
    ada = await signInTestUser(t, 'ada@example.com')
    bob = await signInTestUser(t, 'bob@example.com')
  }, 60_000)
  afterAll(async () => t?.close())

  it('signs the digest for the caller’s confirmed anchor once: the same request answers the same, another digest 409', async () => {
    const txHash = await anchored(t, ada)
    const digest = await sha256Hex(CONTENT)
    const first = await postSignature(t, ada, { txHash, digest })
    expect(first.statusCode).toBe(201)
    const body = first.json()
    expect(body).toMatchObject({
      txHash,
      digest,
      signer:
        'CN=Document Anchoring Service (development certificate, untrusted), O=Development only: not a trusted identity, C=ZZ',
      timestamp: { authority: 'Document Anchoring Service development TSA (untrusted)' },
    })
    const offset = Date.parse(body.timestamp.time) - Date.parse(body.blockTime)
    expect(offset).toBeGreaterThanOrEqual(-5_000)
    expect(offset).toBeLessThan(60_000)

    // The CMS signs exactly those bytes, with the certificate /api/info publishes.
    const info = (await t.app.inject({ url: '/api/info' })).json()
    const service = info.pdfSigning.certificates.flatMap(pemCertificates)
    const check = await checkCmsSignature(Buffer.from(body.cms, 'base64'), CONTENT, service.map(certificateOf))
    expect(check).toMatchObject({ valid: true, trusted: true, signingCertificateV2: true })
    expect(Buffer.from(check.signer!.certificate).equals(Buffer.from(service[0]))).toBe(true)

    const again = await postSignature(t, ada, { txHash: txHash.toUpperCase().replace('0X', '0x'), digest })
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(body)

    const other = await postSignature(t, ada, { txHash, digest: await sha256Hex(new Uint8Array([1])) })
    expect(other.statusCode).toBe(409)
    expect(other.json()).toMatchObject({ code: 'PDF_SIGNATURE_CONFLICT' })
    expect(await kept(t)).toBe(1)

    const metrics = (await t.app.inject({ url: '/metrics' })).body
    expect(metrics).toContain('pdf_signatures_total{outcome="created"} 1')
    expect(metrics).toContain('pdf_signatures_total{outcome="repeated"} 1')
    expect(metrics).toContain('pdf_signatures_total{outcome="conflict"} 1')
    expect(metrics).toMatch(/pdf_signing_certificate_expiry_timestamp_seconds \d{10}/)
  })

  it('answers 404 for someone else’s anchor and for none, 409 for one not confirmed yet, and keeps nothing', async () => {
    const before = await kept(t)
    const digest = await sha256Hex(CONTENT)
    const adas = await anchored(t, ada)
    const notYours = await postSignature(t, bob, { txHash: adas, digest })
    expect(notYours.statusCode).toBe(404)
    expect(notYours.json()).toMatchObject({ code: 'ANCHOR_NOT_FOUND' })
    const none = await postSignature(t, bob, { txHash: `0x${'ab'.repeat(32)}`, digest })
    expect(none.statusCode).toBe(404)

    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const pending = await postRelay(t.app, bob.headers, newBody())
      expect(pending.statusCode).toBe(202)
      const early = await postSignature(t, bob, { txHash: pending.json().txHash, digest })
      expect(early.statusCode).toBe(409)
      expect(early.json()).toMatchObject({ code: 'ANCHOR_NOT_CONFIRMED' })
    } finally {
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
      await rpc(t.testChain.rpcUrl, 'evm_mine')
    }
    expect(await kept(t)).toBe(before)
  })

  it('refuses an anchor mined more than 50 minutes ago, so that no signature is made that would not verify', async () => {
    const txHash = await anchored(t, ada)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 51 * 60_000)
    try {
      const late = await postSignature(t, ada, { txHash, digest: await sha256Hex(CONTENT) })
      expect(late.statusCode).toBe(409)
      expect(late.json()).toMatchObject({ code: 'PDF_SIGNATURE_TOO_LATE' })
      expect(late.json().detail).toMatch(
        /^A PDF signature is made within 50 minutes of its anchor; this one was mined at /,
      )
    } finally {
      vi.useRealTimers()
    }
  })

  it('validates what it is given: 401 without a token, 400 for a digest or hash that is not one', async () => {
    const txHash = await anchored(t, ada)
    expect((await postSignature(t, undefined, { txHash, digest: 'ab'.repeat(32) })).statusCode).toBe(401)
    for (const body of [
      { txHash, digest: 'ab'.repeat(31) },
      { txHash, digest: 'zz'.repeat(32) },
      { txHash: 'ab'.repeat(32), digest: 'ab'.repeat(32) },
      { txHash, digest: 'ab'.repeat(32), extra: true },
    ]) {
      const response = await postSignature(t, ada, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' })
    }
  })
})

describe('POST /api/pdf-signatures with a time-stamping authority that does not answer', () => {
  let t: TestApp
  let tsa: OpensslTsa
  let ada: SignedInUser

  beforeAll(async () => {
    tsa = await startOpensslTsa()
    t = await createTestApp({ env: { TSA_URL: tsa.url, TSA_ATTEMPT_TIMEOUT_MS: '300', TSA_DEADLINE_MS: '700' } })
    ada = await signInTestUser(t, 'ada@example.com')
  }, 60_000)
  afterAll(async () => {
    await t?.close()
    await tsa?.close()
  })

  it('answers 503 TIMESTAMP_UNAVAILABLE keeping nothing, then signs once the authority answers again', async () => {
    const txHash = await anchored(t, ada)
    const digest = await sha256Hex(CONTENT)
    tsa.mode = 'silent'
    const refused = await postSignature(t, ada, { txHash, digest })
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ code: 'TIMESTAMP_UNAVAILABLE' })
    expect(refused.json().detail).not.toContain('127.0.0.1')
    expect(await kept(t)).toBe(0)
    tsa.mode = 'ok'
    const signed = await postSignature(t, ada, { txHash, digest })
    expect(signed.statusCode).toBe(201)
    expect(signed.json().timestamp.authority).toBe('Test TSA')
    const metrics = (await t.app.inject({ url: '/metrics' })).body
    expect(metrics).toMatch(/pdf_timestamp_requests_total\{authority="127\.0\.0\.1:\d+",outcome="failed"\} [1-9]/)
    expect(metrics).toMatch(/pdf_timestamp_requests_total\{authority="127\.0\.0\.1:\d+",outcome="ok"\} 1/)
  })
})
