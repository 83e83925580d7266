// PDF signing and checking where a client runs: this file runs in Node and in headless Chromium, signing PDFs made
// by pdf-lib (classic table and cross-reference stream) twice and checking them, metadata and QR URLs included.

import { describe, expect, it } from 'vitest'
import { decryptPayload } from '../../src/formats/payload-cipher.ts'
import { parseQrUrl } from '../../src/formats/qr-url.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { signPdf } from '../../src/pdf/sign-pdf.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'

const BASE = 'https://verify.example.com'

describe.each([false, true])('signPdf on a pdf-lib PDF (object streams: %s)', (objectStreams) => {
  it('appends two signatures that check valid, with readable metadata and decryptable QR URLs', async () => {
    const anchors = new MemoryAnchors()
    const original = await pdfLibDocument({ objectStreams, pages: 2 })
    const first = await signPdf(original, {
      signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
      verifyBaseUrl: BASE,
      anchor: anchors.anchor,
      pdfSignature: anchors.pdfSignature,
    })
    const second = await signPdf(first.bytes, {
      signer: { type: 'company', name: 'Grace Hopper', email: 'grace@example.com', company: 'Navy' },
      verifyBaseUrl: BASE,
      anchor: anchors.anchor,
      pdfSignature: anchors.pdfSignature,
    })
    expect(second.bytes.subarray(0, first.bytes.length)).toEqual(first.bytes)
    expect(first.bytes.subarray(0, original.length)).toEqual(original)

    const check = await checkSignedPdf(second.bytes, { verify: anchors.verify })
    expect(check.valid).toBe(true)
    expect(check.signatures.map((signature) => signature.payload)).toEqual(['decrypted', 'decrypted'])
    expect((await readSignedPdf(second.bytes)).revisions.length).toBeGreaterThanOrEqual(3)

    const { txHash, key } = parseQrUrl(second.qrUrl)
    const record = await anchors.verify(txHash)
    expect(JSON.parse(await decryptPayload(record!.encryptedPayload!, key)).s).toMatchObject({ n: 'Grace Hopper' })

    // A changed byte makes the file not valid, or (where it breaks the structure) damaged.
    const tampered = second.bytes.slice()
    tampered[100] = tampered[100] === 0x20 ? 0x21 : 0x20
    const verdict = await checkSignedPdf(tampered, { verify: anchors.verify }).then(
      (result) => (result.valid ? 'valid' : 'not valid'),
      (error: unknown) => (error instanceof PdfError && error.code === 'ERR_PDF_DAMAGED' ? 'damaged' : error),
    )
    expect(['not valid', 'damaged']).toContain(verdict)
  })
})
