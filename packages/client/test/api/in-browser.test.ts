// The API client from headless Chromium against the real service (started by ../browser-service.ts): CORS, fetch,
// WebCrypto and the PDF signer together, as a web app or an Electron renderer runs them.
import {
  AnchorApiError,
  certifiedSigner,
  checkSignedPdf,
  createAnchorClient,
  decryptPayload,
  parseQrUrl,
  signPdf,
  txHashToBase64Url,
} from '@docanchor/client'
import { describe, expect, inject, it } from 'vitest'
import { pdfLibDocument } from '../pdf/portable-fixtures.ts'

describe('createAnchorClient in Chromium', () => {
  it('runs in the browser', () => {
    expect(navigator.userAgent).toMatch(/Chrome\//)
  })

  it('signs a PDF through the service, verifies it and decrypts the signer', async () => {
    const { url, token, email } = inject('anchorService')
    const api = createAnchorClient({ baseUrl: url, token })
    expect((await api.me()).user.email).toBe(email)
    const { verifyBaseUrl, chainId, contractAddress } = await api.info()
    const signed = await signPdf(await pdfLibDocument(), {
      signer: { type: 'individual', name: 'Ada Lovelace', email },
      verifyBaseUrl,
      chainId,
      contractAddress,
      anchor: (request) => api.relay(request, { waitMs: 60_000 }),
      pdfSignature: (await certifiedSigner(api)).pdfSignature,
    })
    expect((await checkSignedPdf(signed.bytes, { verify: api.lookupAnchor })).valid).toBe(true)
    const { txHash, key } = parseQrUrl(signed.qrUrl)
    const record = await api.verify(txHashToBase64Url(txHash))
    expect(JSON.parse(await decryptPayload(record.encryptedPayload!, key)).s).toMatchObject({ n: 'Ada Lovelace' })
    expect(await api.library.exists()).toMatchObject({ exists: false })
  })

  it('reads problem bodies and Retry-After across origins', async () => {
    const { url } = inject('anchorService')
    const api = createAnchorClient({ baseUrl: url })
    const invalid = await api.verify('not-a-hash').catch((caught: unknown) => caught)
    expect(invalid).toBeInstanceOf(AnchorApiError)
    expect(invalid).toMatchObject({ status: 400, code: 'VALIDATION_FAILED' })

    // Five codes an hour per address by default: the sixth request is refused with a Retry-After the page can read.
    const email = 'limited@example.com'
    for (let i = 0; i < 5; i++) await api.requestCode(email)
    const limited = await api.requestCode(email).catch((caught: unknown) => caught)
    expect(limited).toMatchObject({ status: 429, code: 'RATE_LIMITED' })
    expect((limited as AnchorApiError).retryAfter).toBeGreaterThan(0)
  })
})
