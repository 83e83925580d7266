// The API client against the real service (Fastify, PGlite, anvil, a real SMTP inbox): every method, the error
// model, retries honouring Retry-After, awaiting a 202 relay, timeouts and AbortSignal.

import {
  AnchorApiError,
  type AnchorClient,
  AnchorNetworkError,
  certifiedSigner,
  checkSignedPdf,
  createAnchorClient,
  createPkcePair,
  signPdf,
  txHashToBase64Url,
} from '@docanchor/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SmtpInbox, startSmtpInbox } from '../../../../test/auth/smtp-inbox.ts'
import { createTestApp, type TestApp } from '../../../../test/helpers/app.ts'
import { rpc } from '../../../../test/relay/relay-helpers.ts'
import { pdfLibDocument } from '../pdf/portable-fixtures.ts'

const VERIFY_BASE = 'https://verify.example.com'
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=='

let t: TestApp
let inbox: SmtpInbox
let baseUrl: string

beforeAll(async () => {
  inbox = await startSmtpInbox()
  t = await createTestApp({
    env: {
      SMTP_URL: inbox.url,
      MAIL_FROM: 'Sign-in <sign-in@example.com>',
      VERIFY_BASE_URL: VERIFY_BASE,
      RELAY_WAIT_MS: '150',
    },
  })
  baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
})
afterAll(async () => {
  await t?.close()
  await inbox?.close()
})

async function signInToken(email: string): Promise<string> {
  const api = createAnchorClient({ baseUrl })
  await api.requestCode(email)
  const session = await api.verifyCode(email, await inbox.nextCode(email))
  expect(session.user.email).toBe(email)
  return session.token
}

async function signIn(email: string): Promise<AnchorClient> {
  return createAnchorClient({ baseUrl }).withToken(await signInToken(email))
}

async function apiError(promise: Promise<unknown>): Promise<AnchorApiError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  )
  expect(error).toBeInstanceOf(AnchorApiError)
  return error as AnchorApiError
}

describe('createAnchorClient against the real service', () => {
  it('signs in with an e-mail code, signs a PDF, verifies it, syncs the library and logs out', async () => {
    // Which requests carried the token: a verification is public, and asked without it so shared caches may answer.
    const authorized = new Map<string, boolean>()
    const api = createAnchorClient({
      baseUrl,
      fetch: (input, init) => {
        const path = new URL(String(input)).pathname
        authorized.set(path, new Headers(init?.headers).has('authorization'))
        return fetch(input, init)
      },
    }).withToken(await signInToken('ada@example.com'))
    expect((await api.me()).user).toMatchObject({ email: 'ada@example.com', authProvider: 'email' })
    const info = await api.info()
    expect(info).toMatchObject({ chainId: t.testChain.chain.id, verifyBaseUrl: VERIFY_BASE })

    const signed = await signPdf(await pdfLibDocument(), {
      signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
      verifyBaseUrl: info.verifyBaseUrl,
      chainId: info.chainId,
      contractAddress: info.contractAddress,
      anchor: (request) => api.relay(request, { waitMs: 60_000 }),
      pdfSignature: (await certifiedSigner(api)).pdfSignature,
    })
    const txHash = signed.signature.tx_hash
    const record = await api.verify(txHash)
    expect(record).toMatchObject({ txHash, compositeHash: signed.signature.composite_hash })
    expect(authorized.get(`/api/verify/${txHash}`)).toBe(false)
    expect(authorized.get('/api/relay')).toBe(true)
    expect(await api.verify(txHashToBase64Url(txHash))).toEqual(record)
    expect((await api.anchor(record.compositeHash)).status).toBe('confirmed')
    const check = await checkSignedPdf(signed.bytes, { verify: api.lookupAnchor })
    expect(check.valid).toBe(true)
    expect(await api.lookupAnchor(`0x${'ab'.repeat(32)}`)).toBeNull()

    const id = crypto.randomUUID()
    const now = new Date().toISOString()
    expect(await api.library.exists()).toMatchObject({ exists: false, signatures: 0 })
    const synced = await api.library.sync({
      signatures: { upsert: [{ id, label: 'Ada', base64Png: PNG, updatedAt: now, createdAt: now }] },
    })
    expect(synced).toMatchObject({ signatures: [{ id, label: 'Ada' }], snippets: [], skipped: [] })
    expect((await api.library.get()).signatures).toHaveLength(1)
    await api.library.delete()
    expect(await api.library.exists()).toMatchObject({ exists: false, signatures: 0, snippets: 0 })

    await api.logout()
    const refused = await apiError(api.me())
    expect(refused).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' })
  })

  it('throws AnchorApiError with the problem body: status, code, detail, per-field errors', async () => {
    const api = createAnchorClient({ baseUrl })
    await api.requestCode('grace@example.com')
    await inbox.nextCode('grace@example.com')
    const wrongCode = await apiError(api.verifyCode('grace@example.com', '000000'))
    expect(wrongCode).toMatchObject({ status: 401, code: 'INVALID_CODE', errors: [], retryAfter: undefined })
    expect(wrongCode.detail.length).toBeGreaterThan(0)

    const signedIn = await signIn('grace@example.com')
    const invalid = await apiError(
      signedIn.relay({ compositeHash: '0x12', previousTxHash: `0x${'0'.repeat(64)}`, encryptedPayload: 'AAAA' }),
    )
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' })
    expect(invalid.errors.map((error) => error.path)).toContain('compositeHash')

    const missing = await apiError(api.verify(`0x${'ab'.repeat(32)}`))
    expect(missing).toMatchObject({ status: 404, code: 'ANCHOR_NOT_FOUND' })
  })

  it('awaits a relay answered 202 until GET /api/anchors/:compositeHash says confirmed', async () => {
    const token = await signInToken('pending@example.com')
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    const answers: number[] = []
    const watching = createAnchorClient({
      baseUrl,
      token,
      fetch: async (input, init) => {
        const response = await fetch(input, init)
        if (String(input).endsWith('/api/relay')) answers.push(response.status)
        return response
      },
    })
    try {
      const signing = signPdf(await pdfLibDocument(), {
        signer: { type: 'company', name: 'Pending Ltd', email: 'pending@example.com' },
        verifyBaseUrl: VERIFY_BASE,
        chainId: t.testChain.chain.id,
        contractAddress: t.testChain.contract,
        anchor: (request) => watching.relay(request, { waitMs: 60_000, pollIntervalMs: 50 }),
        pdfSignature: (await certifiedSigner(watching)).pdfSignature,
      })
      // Bounded, so a relay that never answers fails here, naming what was seen, not at the test timeout.
      await expect.poll(() => answers, { timeout: 10_000 }).toEqual([202])
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
      await rpc(t.testChain.rpcUrl, 'evm_mine')
      await t.app.relayMonitor.tick()
      const signed = await signing
      const state = await watching.anchor(signed.signature.composite_hash)
      expect(state).toMatchObject({ status: 'confirmed', txHash: signed.signature.tx_hash })
    } finally {
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
    }
  })

  it('retries 429, 502 and 503 only when asked, waiting what Retry-After says', async () => {
    const injected = [
      new Response(JSON.stringify({ status: 503, code: 'NOT_READY', detail: 'starting' }), {
        status: 503,
        headers: { 'content-type': 'application/problem+json', 'retry-after': '0' },
      }),
    ]
    let calls = 0
    const flaky: typeof fetch = async (input, init) => {
      calls++
      return injected.shift() ?? fetch(input, init)
    }
    expect((await createAnchorClient({ baseUrl, fetch: flaky, retries: 1 }).info()).chainId).toBe(t.testChain.chain.id)
    expect(calls).toBe(2)

    injected.push(new Response('{}', { status: 503, headers: { 'retry-after': '0' } }))
    calls = 0
    const unretried = await apiError(createAnchorClient({ baseUrl, fetch: flaky }).info())
    expect(unretried).toMatchObject({ status: 503, code: 'HTTP_503', retryAfter: 0 })
    expect(calls).toBe(1)

    // An answer asking for longer than the caller allows is thrown at once rather than slept on.
    injected.push(new Response('{"code":"RATE_LIMITED"}', { status: 429, headers: { 'retry-after': '3600' } }))
    calls = 0
    const limited = await apiError(createAnchorClient({ baseUrl, fetch: flaky, retries: 3 }).info())
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED', retryAfter: 3600 })
    expect(calls).toBe(1)
  })

  it('gives up after its time limit and stops at once when the caller aborts', async () => {
    const silent: typeof fetch = (_input, init) =>
      new Promise((_resolve, reject) => init?.signal?.addEventListener('abort', () => reject(init.signal?.reason)))
    const timedOut = await createAnchorClient({ baseUrl, fetch: silent, timeoutMs: 50 })
      .info()
      .catch((e) => e)
    expect(timedOut).toBeInstanceOf(AnchorNetworkError)
    expect(timedOut).toMatchObject({ reason: 'timeout' })

    const controller = new AbortController()
    const aborted = createAnchorClient({ baseUrl, fetch: silent }).info({ signal: controller.signal })
    controller.abort(new Error('the user closed the window'))
    await expect(aborted).rejects.toThrow('the user closed the window')

    const unreachable = await createAnchorClient({ baseUrl: 'http://127.0.0.1:9' })
      .info()
      .catch((e) => e)
    expect(unreachable).toMatchObject({ name: 'AnchorNetworkError', reason: 'unreachable' })
  })

  it('makes a PKCE pair and the provider sign-in URL carrying its challenge', async () => {
    const { verifier, challenge } = await createPkcePair()
    expect(verifier).toMatch(/^[A-Za-z0-9_-]{43}$/)
    const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)))
    expect(challenge).toBe(txHashToBase64Url(`0x${Buffer.from(digest).toString('hex')}`))
    const url = new URL(createAnchorClient({ baseUrl }).oauthSignInUrl('google', challenge))
    expect(url.pathname).toBe('/api/auth/google')
    expect(url.searchParams.get('code_challenge')).toBe(challenge)
    expect(url.searchParams.get('code_challenge_method')).toBe('S256')
    const unknown = await apiError(createAnchorClient({ baseUrl }).exchange('x'.repeat(43), verifier))
    expect(unknown).toMatchObject({ status: 401, code: 'INVALID_CODE' })
  })
})
