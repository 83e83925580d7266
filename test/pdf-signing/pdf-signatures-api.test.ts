// The service as its signers' CA, on anvil (issue 37). POST /api/signer-certificates certifies the caller's own key
// under the account's verified e-mail; POST /api/pdf-signatures timestamps a PDF signature the caller's certificate
// made for the caller's own confirmed anchor, naming it, once per anchor (the same request answers the same CMS,
// another digest is refused, a concurrent loser costs no timestamp), within the signing window, keeping nothing when
// no time-stamping authority answers. What an attacker asks for yields no signature attributed to the service or to
// anyone but the caller.
import {
  anchoredSignatureCms,
  buildSignedData,
  CMS_OID,
  type CmsSigner,
  certificateOf,
  certificationRequest,
  checkCmsSignature,
  contentInfoDer,
  makeSignerKey,
  pemCertificates,
  webCryptoSigningKey,
} from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { issueToken } from '../../src/auth/jwt.ts'
import { revokeSignerCertificates } from '../../src/pdf-signing/signer-certificate-store.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { type OpensslTsa, startOpensslTsa } from '../helpers/pdf-signing/openssl-tsa.ts'
import { newBody, postRelay, query, relayMined, rpc } from '../relay/relay-helpers.ts'

const CONTENT = new TextEncoder().encode('a PDF byte range the service never sees')

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  return Buffer.from(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)).toString('hex')
}

function post(t: TestApp, url: string, user: SignedInUser | undefined, body: unknown) {
  return t.app.inject({ method: 'POST', url, headers: user?.headers ?? {}, payload: body as object })
}

/** The caller's own key, certified by the service; what the CLI does at its first `anchor sign`. */
async function certified(t: TestApp, user: SignedInUser): Promise<CmsSigner> {
  const keys = await makeSignerKey()
  const csr = Buffer.from(await certificationRequest(keys, 'whatever the client asks for')).toString('base64')
  const response = await post(t, '/api/signer-certificates', user, { csr })
  expect(response.statusCode, response.body).toBe(201)
  const { certificate, chain } = response.json() as { certificate: string; chain: string[] }
  return {
    key: webCryptoSigningKey(keys.privateKey),
    certificates: [certificate, ...chain].map((der) => certificateOf(new Uint8Array(Buffer.from(der, 'base64')))),
  }
}

/** A confirmed anchor of `user`, with what its signature's anchor attribute names. */
async function anchored(t: TestApp, user: SignedInUser) {
  const body = newBody()
  const txHash = await relayMined(t.app, user.headers, body)
  return { txHash, compositeHash: body.compositeHash }
}

async function signatureFor(
  t: TestApp,
  signer: CmsSigner,
  anchor: { txHash: string; compositeHash: string },
  content = CONTENT,
) {
  const cms = await anchoredSignatureCms(signer, {
    ...anchor,
    digest: await sha256Hex(content),
    chainId: t.testChain.chain.id,
    contractAddress: t.testChain.contract,
  })
  return { txHash: anchor.txHash, cms: Buffer.from(cms).toString('base64') }
}

const kept = async (t: TestApp) =>
  Number(
    (
      await query<{ n: unknown }>(
        t.database.handle.db,
        sql`SELECT count(*) AS n FROM pdf_signatures WHERE cms IS NOT NULL`,
      )
    )[0]!.n,
  )

describe('POST /api/signer-certificates and /api/pdf-signatures', () => {
  let t: TestApp
  let ada: SignedInUser
  let bob: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_WAIT_MS: '300' } })
    ada = await signInTestUser(t, 'ada@example.com', 'google')
    bob = await signInTestUser(t, 'bob@example.com')
  }, 60_000)
  afterAll(async () => t?.close())

  it('certifies the caller’s key under the account’s e-mail, whatever the request’s subject says', async () => {
    const keys = await makeSignerKey()
    const csr = Buffer.from(await certificationRequest(keys, 'ceo@bank.example')).toString('base64')
    const response = await post(t, '/api/signer-certificates', ada, { csr })
    expect(response.statusCode).toBe(201)
    const body = response.json()
    expect(body).toMatchObject({ email: 'ada@example.com', serialNumber: expect.stringMatching(/^[0-9a-f]{32}$/) })
    const certificate = certificateOf(new Uint8Array(Buffer.from(body.certificate, 'base64')))
    const info = (await t.app.inject({ url: '/api/info' })).json()
    const ca = info.pdfSigning.certificates.flatMap(pemCertificates).map(certificateOf)
    expect(await certificate.verify(ca[0])).toBe(true)
    expect(certificate.subject.typesAndValues.map((value) => String(value.value.valueBlock.value))).toEqual([
      'ada@example.com',
      'ada@example.com',
    ])
    expect(body.chain.map((der: string) => certificateOf(new Uint8Array(Buffer.from(der, 'base64'))).subject)).toEqual(
      ca.map((c: { subject: unknown }) => c.subject),
    )
  })

  it('refuses an unverified e-mail (403), a request that is not a P-256 PKCS#10 (422), and bad bodies (400)', async () => {
    const { jwt } = t.app.deps
    const claims = JSON.parse(Buffer.from(bob.token.split('.')[1]!, 'base64url').toString())
    const unverified = await issueToken(jwt, { ...claims, verified: false })
    const csr = Buffer.from(await certificationRequest(await makeSignerKey(), 'x')).toString('base64')
    const forbidden = await t.app.inject({
      method: 'POST',
      url: '/api/signer-certificates',
      headers: { authorization: `Bearer ${unverified.token}` },
      payload: { csr },
    })
    expect(forbidden.statusCode).toBe(403)
    expect(forbidden.json()).toMatchObject({ code: 'EMAIL_NOT_VERIFIED' })
    const invalid = await post(t, '/api/signer-certificates', bob, {
      csr: Buffer.from('not a request').toString('base64'),
    })
    expect(invalid.statusCode).toBe(422)
    expect(invalid.json()).toMatchObject({ code: 'CSR_INVALID' })
    for (const body of [{}, { csr: '***' }, { csr, extra: 1 }, { csr: 'A'.repeat(5000) }]) {
      expect((await post(t, '/api/signer-certificates', bob, body)).statusCode, JSON.stringify(body)).toBe(400)
    }
  })

  it('timestamps the caller’s own signature for its anchor once: the same request answers the same, another digest 409', async () => {
    const signer = await certified(t, ada)
    const anchor = await anchored(t, ada)
    const request = await signatureFor(t, signer, anchor)
    const first = await post(t, '/api/pdf-signatures', ada, request)
    expect(first.statusCode).toBe(201)
    const body = first.json()
    expect(body).toMatchObject({
      txHash: anchor.txHash,
      digest: await sha256Hex(CONTENT),
      signer: 'CN=ada@example.com, E=ada@example.com',
      timestamp: { authority: 'Document Anchoring Service development TSA (untrusted)' },
    })
    const offset = Date.parse(body.timestamp.time) - Date.parse(body.blockTime)
    expect(offset).toBeGreaterThanOrEqual(-5_000)
    expect(offset).toBeLessThan(60_000)
    // The CMS signs exactly those bytes, with Ada's certificate from the CA /api/info publishes.
    const info = (await t.app.inject({ url: '/api/info' })).json()
    const roots = info.pdfSigning.certificates.flatMap(pemCertificates).map(certificateOf)
    const check = await checkCmsSignature(Buffer.from(body.cms, 'base64'), CONTENT, roots)
    expect(check).toMatchObject({ valid: true, trusted: true, signer: { commonName: 'ada@example.com' } })
    expect(check.anchor).toMatchObject({ txHash: anchor.txHash, compositeHash: anchor.compositeHash })

    const again = await post(t, '/api/pdf-signatures', ada, request)
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(body)
    const other = await post(t, '/api/pdf-signatures', ada, await signatureFor(t, signer, anchor, new Uint8Array([1])))
    expect(other.statusCode).toBe(409)
    expect(other.json()).toMatchObject({ code: 'PDF_SIGNATURE_CONFLICT' })
    expect(await kept(t)).toBe(1)

    const metrics = (await t.app.inject({ url: '/metrics' })).body
    expect(metrics).toContain('pdf_signatures_total{outcome="created"} 1')
    expect(metrics).toContain('pdf_signatures_total{outcome="repeated"} 1')
    expect(metrics).toContain('pdf_signatures_total{outcome="conflict"} 1')
    expect(metrics).toMatch(/pdf_signing_certificate_expiry_timestamp_seconds \d{10}/)
  })

  it('signs nothing blind: a bare digest is not a request, and no request yields a signature but the caller’s own', async () => {
    const before = await kept(t)
    const adaSigner = await certified(t, ada)
    const bobSigner = await certified(t, bob)
    const adas = await anchored(t, ada)
    const bobs = await anchored(t, bob)
    const attempts: [string, SignedInUser, unknown, number, string][] = [
      [
        'the old blind form: a digest for an anchor',
        ada,
        { txHash: adas.txHash, digest: await sha256Hex(CONTENT) },
        400,
        'VALIDATION_FAILED',
      ],
      [
        'Ada’s signature, sent by Bob for Ada’s anchor',
        bob,
        await signatureFor(t, adaSigner, adas),
        404,
        'ANCHOR_NOT_FOUND',
      ],
      [
        'Bob’s signature naming Ada’s anchor, for his own',
        bob,
        { ...(await signatureFor(t, bobSigner, adas)), txHash: bobs.txHash },
        422,
        'PDF_SIGNATURE_REFUSED',
      ],
      [
        'Bob’s certificate, sent by Ada for her anchor',
        ada,
        await signatureFor(t, bobSigner, adas),
        403,
        'CERTIFICATE_NOT_YOURS',
      ],
      [
        'Ada’s certificate on a CMS Bob’s key signed',
        bob,
        await signatureFor(t, { ...bobSigner, certificates: adaSigner.certificates }, bobs),
        422,
        'PDF_SIGNATURE_REFUSED',
      ],
      [
        'a signature naming no anchor',
        ada,
        {
          txHash: adas.txHash,
          cms: Buffer.from(
            contentInfoDer(
              await buildSignedData({
                signer: adaSigner,
                contentType: CMS_OID.data,
                messageDigest: Buffer.from(await sha256Hex(CONTENT), 'hex'),
              }),
            ),
          ).toString('base64'),
        },
        422,
        'PDF_SIGNATURE_REFUSED',
      ],
    ]
    for (const [what, user, body, status, code] of attempts) {
      const response = await post(t, '/api/pdf-signatures', user, body)
      expect(response.statusCode, what).toBe(status)
      expect(response.json().code, what).toBe(code)
    }
    expect(await kept(t)).toBe(before)
  })

  it('refuses a revoked certificate (an account blocked or deleted) with 403 CERTIFICATE_REVOKED', async () => {
    const carol = await signInTestUser(t, 'carol@example.com')
    const signer = await certified(t, carol)
    const anchor = await anchored(t, carol)
    await revokeSignerCertificates(t.database.handle.db, carol.id, 'blocked')
    const response = await post(t, '/api/pdf-signatures', carol, await signatureFor(t, signer, anchor))
    expect(response.statusCode).toBe(403)
    expect(response.json()).toMatchObject({ code: 'CERTIFICATE_REVOKED' })
  })

  it('answers 404 for none, 409 for an anchor not confirmed yet, and keeps nothing', async () => {
    const before = await kept(t)
    const signer = await certified(t, bob)
    const none = await post(
      t,
      '/api/pdf-signatures',
      bob,
      await signatureFor(t, signer, { txHash: `0x${'ab'.repeat(32)}`, compositeHash: `0x${'cd'.repeat(32)}` }),
    )
    expect(none.statusCode).toBe(404)
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    try {
      const body = newBody()
      const pending = await postRelay(t.app, bob.headers, body)
      expect(pending.statusCode).toBe(202)
      const early = await post(
        t,
        '/api/pdf-signatures',
        bob,
        await signatureFor(t, signer, { txHash: pending.json().txHash, compositeHash: body.compositeHash }),
      )
      expect(early.statusCode).toBe(409)
      expect(early.json()).toMatchObject({ code: 'ANCHOR_NOT_CONFIRMED' })
    } finally {
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
      await rpc(t.testChain.rpcUrl, 'evm_mine')
    }
    expect(await kept(t)).toBe(before)
  })

  it('refuses an anchor mined more than 50 minutes ago, so that no signature is made that would not verify', async () => {
    const signer = await certified(t, ada)
    const anchor = await anchored(t, ada)
    const request = await signatureFor(t, signer, anchor)
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 51 * 60_000)
    try {
      const late = await post(t, '/api/pdf-signatures', ada, request)
      expect(late.statusCode).toBe(409)
      expect(late.json()).toMatchObject({ code: 'PDF_SIGNATURE_TOO_LATE' })
      expect(late.json().detail).toMatch(
        /^A PDF signature is made within 50 minutes of its anchor; this one was mined at /,
      )
    } finally {
      vi.useRealTimers()
    }
  })

  it('validates what it is given: 401 without a token, 400 for a hash or CMS that is not one', async () => {
    const { txHash } = await anchored(t, ada)
    expect((await post(t, '/api/pdf-signatures', undefined, { txHash, cms: 'MAA=' })).statusCode).toBe(401)
    for (const body of [
      { txHash, cms: '***' },
      { txHash: 'ab'.repeat(32), cms: 'MAA=' },
      { txHash, cms: 'MAA=', extra: true },
      { txHash, cms: 'A'.repeat(20_000) },
    ]) {
      const response = await post(t, '/api/pdf-signatures', ada, body)
      expect(response.statusCode, JSON.stringify(body)).toBe(400)
      expect(response.json()).toMatchObject({ code: 'VALIDATION_FAILED' })
    }
    const garbage = await post(t, '/api/pdf-signatures', ada, { txHash, cms: 'MAA=' })
    expect(garbage.statusCode).toBe(422)
    expect(garbage.json()).toMatchObject({ code: 'PDF_SIGNATURE_REFUSED' })
  })
})

describe('POST /api/pdf-signatures with a real time-stamping authority', () => {
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

  it('answers 503 TIMESTAMP_UNAVAILABLE keeping nothing, then timestamps once the authority answers again', async () => {
    const signer = await certified(t, ada)
    const anchor = await anchored(t, ada)
    const request = await signatureFor(t, signer, anchor)
    tsa.mode = 'silent'
    const refused = await post(t, '/api/pdf-signatures', ada, request)
    expect(refused.statusCode).toBe(503)
    expect(refused.json()).toMatchObject({ code: 'TIMESTAMP_UNAVAILABLE' })
    expect(refused.json().detail).not.toContain('127.0.0.1')
    expect(await kept(t)).toBe(0)
    tsa.mode = 'ok'
    const signed = await post(t, '/api/pdf-signatures', ada, request)
    expect(signed.statusCode).toBe(201)
    expect(signed.json().timestamp.authority).toBe('Test TSA')
    const metrics = (await t.app.inject({ url: '/metrics' })).body
    expect(metrics).toMatch(/pdf_timestamp_requests_total\{authority="127\.0\.0\.1:\d+",outcome="failed"\} [1-9]/)
    expect(metrics).toMatch(/pdf_timestamp_requests_total\{authority="127\.0\.0\.1:\d+",outcome="ok"\} 1/)
  })

  it('asks the authority once when two requests for one anchor race: the other digest loses without a token', async () => {
    const signer = await certified(t, ada)
    const anchor = await anchored(t, ada)
    const granted = tsa.granted
    const answers = await Promise.all([
      post(t, '/api/pdf-signatures', ada, await signatureFor(t, signer, anchor)),
      post(t, '/api/pdf-signatures', ada, await signatureFor(t, signer, anchor, new Uint8Array([2]))),
    ])
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 409])
    expect(answers.find((answer) => answer.statusCode === 409)!.json().code).toMatch(
      /^PDF_SIGNATURE_(CONFLICT|IN_PROGRESS)$/,
    )
    expect(tsa.granted - granted).toBe(1)
  })
})
