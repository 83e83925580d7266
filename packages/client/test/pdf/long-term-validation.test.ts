// Long-term validation (PAdES B-LT and B-LTA): a signed file gains its DSS and a document timestamp, and keeps every
// signature valid; the checker reads the signer's revocation status from the DSS offline (a signature made after its
// certificate was revoked fails, one made before passes), ignores status no one it trusts signed, and `extend` adds
// the next timestamp. The service's CA answers OCSP and CRL requests made through revocationSource by the URLs its
// certificates name.
import { beforeAll, describe, expect, it } from 'vitest'
import { ocspResponse } from '../../../../src/pdf-signing/revocation-status.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { addLongTermValidation } from '../../src/pdf/long-term-validation.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { type SignPdfOptions, signPdf } from '../../src/pdf/sign-pdf.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'
import { type StatusOf, type TestService, testService } from './test-pdf-signer.ts'

const ADA = { type: 'individual', name: 'Ada Lovelace', email: 'signer@example.com' } as const
const anchors = new MemoryAnchors()
let service: TestService
let original: Uint8Array

beforeAll(async () => {
  service = await testService()
  original = await pdfLibDocument({ pages: 2 })
})

async function sign(bytes: Uint8Array, statusOf?: StatusOf, extra: Partial<SignPdfOptions> = {}) {
  return signPdf(bytes, {
    signer: ADA,
    verifyBaseUrl: 'https://verify.example.com',
    anchor: anchors.anchor,
    pdfSignature: service.pdfSignature(await service.signer()),
    chainId: 31337,
    contractAddress: `0x${'00'.repeat(20)}`,
    longTermValidation: service.longTermValidation(statusOf),
    ...extra,
  })
}

const check = (bytes: Uint8Array) =>
  checkSignedPdf(bytes, { verify: anchors.verify, serviceCertificates: service.published })

describe('a signature with long-term validation (B-LTA)', () => {
  it('is followed by a DSS and a document timestamp that change nothing shown, and verifies as B-LTA', async () => {
    const before = { ...service.statusRequests }
    const { bytes, warnings } = await sign(original)
    expect(warnings).toEqual([])
    const read = await readSignedPdf(bytes)
    // The original, the signature, its DSS, the document timestamp.
    expect(read.revisions).toHaveLength(4)
    expect(read.pdfSignatures.map((field) => [field.revision, field.subFilter])).toEqual([
      [1, 'ETSI.CAdES.detached'],
      [3, 'ETSI.RFC3161'],
    ])
    expect(read.changes).toEqual([])
    expect(read.validationData.ocspResponses.length).toBeGreaterThan(0)
    // The signer's status came from the CA's responder, by the URL its certificate names.
    expect(service.statusRequests.ocsp).toBeGreaterThan(before.ocsp)
    const result = await check(bytes)
    expect(result.problems).toEqual([])
    expect(result.signatures[0]!.problems).toEqual([])
    expect(result.signatures[0]!.pdfSignature).toMatchObject({
      status: 'valid',
      level: 'B-LTA',
      revocation: { state: 'good', source: 'OCSP' },
    })
    expect(result.otherSignatures).toMatchObject([{ subFilter: 'ETSI.RFC3161', status: 'valid', trusted: true }])
    expect(result.valid).toBe(true)
  })

  it('is B-T without long-term validation, and a failed one leaves the signed file as it was, with a warning', async () => {
    const plain = await sign(original, undefined, { longTermValidation: undefined })
    expect((await check(plain.bytes)).signatures[0]!.pdfSignature).toMatchObject({
      level: 'B-T',
      revocation: { state: 'unknown' },
    })
    const failing = await sign(original, undefined, {
      longTermValidation: {
        ...service.longTermValidation(),
        documentTimestamp: () => Promise.reject(new Error('no time-stamping authority answered')),
      },
    })
    expect(failing.warnings).toEqual([
      'no long-term validation data was added (no time-stamping authority answered): the signature is B-T until it ' +
        'is (anchor extend)',
    ])
    const read = await readSignedPdf(failing.bytes)
    expect(read.revisions).toHaveLength(2)
    expect((await check(failing.bytes)).valid).toBe(true)
  })

  it('is extended with the next document timestamp, and countersigned, every signature staying valid', async () => {
    const first = await sign(original)
    const extended = await addLongTermValidation(first.bytes, service.longTermValidation())
    expect(extended.warnings).toEqual([])
    const second = await sign(extended.bytes)
    const again = await addLongTermValidation(second.bytes, service.longTermValidation())
    const read = await readSignedPdf(again.bytes)
    expect(read.pdfSignatures.map((field) => field.subFilter)).toEqual([
      'ETSI.CAdES.detached',
      'ETSI.RFC3161',
      'ETSI.RFC3161',
      'ETSI.CAdES.detached',
      'ETSI.RFC3161',
      'ETSI.RFC3161',
    ])
    expect(read.changes).toEqual([])
    const result = await check(again.bytes)
    expect(result.problems).toEqual([])
    expect(result.signatures.map((signature) => [signature.valid, signature.pdfSignature?.level])).toEqual([
      [true, 'B-LTA'],
      [true, 'B-LTA'],
    ])
    expect(result.otherSignatures.every((other) => other.status === 'valid' && other.trusted)).toBe(true)
  })

  it('refuses a file without a signature, and one changed after it was signed', async () => {
    const unsigned = await addLongTermValidation(original, service.longTermValidation()).catch((e: unknown) => e)
    expect(unsigned).toBeInstanceOf(PdfError)
    expect((unsigned as PdfError).message).toBe('the PDF has no signature whose validation data could be added')
    const { bytes } = await sign(original, undefined, { longTermValidation: undefined })
    const { PDF } = await import('@libpdf/core')
    const pdf = await PDF.load(bytes)
    pdf.getPage(0)!.drawText('PAID IN FULL', { x: 50, y: 700 })
    const changed = await pdf.save({ incremental: true })
    const refused = await addLongTermValidation(changed, service.longTermValidation()).catch((e: unknown) => e)
    expect(refused).toBeInstanceOf(PdfError)
    expect((refused as PdfError).code).toBe('ERR_PDF_MODIFIED')
  })
})

describe('the signer’s revocation status, read from the DSS', () => {
  it('reads at most 200 items of each kind, each checked once: a DSS of thousands costs a bounded time', async () => {
    const { bytes } = await sign(original)
    const { PDF, PdfArray } = await import('@libpdf/core')
    const pdf = await PDF.load(bytes)
    const resolve = (ref: Parameters<typeof pdf.getObject>[0]) => pdf.getObject(ref)
    const dss = pdf.getCatalog().getDict('DSS', resolve)!
    const first = dss.getArray('OCSPs', resolve)!.at(0)!
    dss.set('OCSPs', PdfArray.of(...Array.from({ length: 5000 }, () => first)))
    const stuffed = await pdf.save({ incremental: true })
    const read = await readSignedPdf(stuffed)
    expect(read.validationData.ocspResponses).toHaveLength(200)
    const started = performance.now()
    const result = await check(stuffed)
    expect(performance.now() - started).toBeLessThan(3_000)
    expect(result.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', revocation: { state: 'good' } })
  })

  it('fails a signature made after its certificate was revoked', async () => {
    const revokedAt = new Date(Date.now() - 3_600_000)
    const { bytes } = await sign(original, async () => ({ state: 'revoked', at: revokedAt }))
    const result = await check(bytes)
    const [signature] = result.signatures
    expect(signature!.pdfSignature).toMatchObject({
      status: 'invalid',
      revocation: { state: 'revoked', source: 'OCSP', revokedAt: revokedAt.toISOString().replace(/\.\d+Z$/, '.000Z') },
    })
    expect(signature!.problems).toEqual([
      expect.stringMatching(
        /^its PDF signature is invalid: its signer's certificate was revoked on .*, before it signed \(.*\)$/,
      ),
    ])
    expect(result.valid).toBe(false)
  })

  it('keeps valid a signature made before its certificate was revoked, saying when it was', async () => {
    const { bytes } = await sign(original, undefined, { longTermValidation: undefined })
    // Revoked a minute after it signed; the file was extended after the revocation.
    const revokedAt = new Date(Date.now() + 60_000)
    const extended = await addLongTermValidation(
      bytes,
      service.longTermValidation(async () => ({ state: 'revoked', at: revokedAt })),
    )
    const result = await check(extended.bytes)
    expect(result.signatures[0]!.problems).toEqual([])
    expect(result.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', revocation: { state: 'revoked' } })
    expect(result.valid).toBe(true)
  })

  it('ignores status its issuer did not sign: a forged revocation, a forged "good"', async () => {
    const { bytes } = await sign(original, undefined, { longTermValidation: undefined })
    // Answers naming the service's CA, signed with another key: what anyone extending the file could add.
    const impostor = await testService()
    const forgedBy = (state: 'good' | 'revoked') => ({
      ...service.longTermValidation(),
      revocation: {
        getCRL: async () => null,
        getOCSP: async (certificate: Uint8Array, issuer: Uint8Array) => {
          const { OCSPRequest, Certificate } = await import('pkijs')
          const parse = (der: Uint8Array) => Certificate.fromBER(new Uint8Array(der).buffer)
          const request = new OCSPRequest()
          await request.createForCertificate(parse(certificate), {
            hashAlgorithm: 'SHA-1',
            issuerCertificate: parse(issuer),
          })
          const forger = { key: impostor.authority.issuer.key, certificates: service.authority.certificates }
          return ocspResponse(forger, new Uint8Array(request.toSchema(true).toBER(false)), async () =>
            state === 'good' ? { state } : { state, at: new Date(Date.now() - 86_400_000) },
          )
        },
      },
    })
    const revoked = await addLongTermValidation(bytes, forgedBy('revoked'))
    expect(revoked.bytes.length).toBeGreaterThan(bytes.length)
    const result = await check(revoked.bytes)
    expect(result.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', revocation: { state: 'unknown' } })
    expect(result.valid).toBe(true)
    // A genuine revocation stands whatever else the file says.
    const { bytes: signedRevoked } = await sign(original, async () => ({
      state: 'revoked',
      at: new Date(Date.now() - 60_000),
    }))
    const good = await addLongTermValidation(signedRevoked, forgedBy('good'))
    const judged = await check(good.bytes)
    expect(judged.signatures[0]!.pdfSignature).toMatchObject({ status: 'invalid', revocation: { state: 'revoked' } })
  })
})
