// What checkSignedPdf demands of the PDF signature an anchored signature's revision carries: made with a signer
// certificate the service's CA issued, naming its anchor among what it signs, by the e-mail the service attests,
// timestamped within the window of the anchor's block, its /ByteRange around its own /Contents only.
import { describe, expect, it } from 'vitest'
import { fromHex } from '../../src/formats/hex.ts'
import { identityCommitment } from '../../src/formats/identity-attestation.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { OID } from '../../src/pdf/cms/der.ts'
import { buildSignedData, contentInfoDer } from '../../src/pdf/cms/signed-data.ts'
import type { PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'
import { signPdf } from '../../src/pdf/sign-pdf.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'
import { testService } from './test-pdf-signer.ts'

const ADA = { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' } as const
const BASE = 'https://verify.example.com'

async function signedOnce(pdfSignature: (request: PdfSignatureRequest) => Promise<Uint8Array>) {
  const anchors = new MemoryAnchors()
  const result = await signPdf(await pdfLibDocument(), {
    signer: ADA,
    verifyBaseUrl: BASE,
    anchor: anchors.anchor,
    pdfSignature,
  })
  return { anchors, result }
}

describe('the PDF signature of an anchored signature', () => {
  it('is made by a signer the service certified, under the signer’s e-mail, naming its anchor', async () => {
    const service = await testService()
    const { anchors, result } = await signedOnce(service.pdfSignature(await service.signer(ADA.email)))
    const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: service.published })
    expect(check.signatures[0]!.problems).toEqual([])
    expect(check.signatures[0]!.pdfSignature).toMatchObject({
      status: 'valid',
      certifiedByService: true,
      // Certified by the service's CA, which is no root the verifier was told to trust: as a reader would say.
      trusted: false,
      signerEmail: ADA.email,
      anchor: { txHash: result.signature.tx_hash, compositeHash: result.signature.composite_hash, chainId: 31337 },
      signer: { commonName: ADA.email },
    })
    expect(check.valid).toBe(true)
  })

  it('is not certified by the service when another CA issued its certificate', async () => {
    const service = await testService()
    const other = await testService()
    const { anchors, result } = await signedOnce(other.pdfSignature(await other.signer(ADA.email)))
    const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: service.published })
    expect(check.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', certifiedByService: false })
    expect(check.signatures[0]!.problems).toEqual([
      `its PDF signature's certificate was not issued by the service's CA (CN=${ADA.email}, E=${ADA.email})`,
      // The other CA's time-stamping authority is not the service's either.
      "its PDF signature's timestamp is by an authority neither the service nor you trust " +
        '(Document Anchoring Service development TSA (untrusted))',
    ])
    expect(check.valid).toBe(false)
    // Without the service's certificates no issuer is demanded.
    expect((await checkSignedPdf(result.bytes, { verify: anchors.verify })).valid).toBe(true)
  })

  it('must name its own anchor: a signature made for another anchor is refused', async () => {
    const service = await testService()
    const sign = service.pdfSignature(await service.signer(ADA.email))
    const { anchors, result } = await signedOnce((request) =>
      sign({ ...request, txHash: `0x${'ab'.repeat(32)}`, compositeHash: `0x${'cd'.repeat(32)}` }),
    )
    const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: service.published })
    expect(check.signatures[0]!.problems).toEqual([
      `its PDF signature names another anchor (transaction 0x${'ab'.repeat(32)})`,
    ])
  })

  it('must be made with the certificate of the e-mail the service attests', async () => {
    const service = await testService()
    // The service attests Ada's account, but the PDF signature is Mallory's.
    const anchors = new MemoryAnchors()
    const attested = async (request: Parameters<MemoryAnchors['anchor']>[0]) => {
      const made = await anchors.anchor(request)
      anchors.records.get(made.txHash)!.attestation = {
        trust: 'email',
        verified: true,
        identityCommitment: await identityCommitment(ADA.email, request.salt!),
      }
      return made
    }
    const result = await signPdf(await pdfLibDocument(), {
      signer: { ...ADA, trust: 'email', verified: true },
      verifyBaseUrl: BASE,
      anchor: attested,
      pdfSignature: service.pdfSignature(await service.signer('mallory@example.com')),
    })
    const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: service.published })
    expect(check.signatures[0]!.identity?.state).toBe('attested')
    expect(check.signatures[0]!.problems).toEqual([
      'its PDF signature was made with a certificate of mallory@example.com, not of ada@example.com, whom the service attests',
    ])
  })

  it('must be timestamped within the window of its anchor’s block, and timestamped at all', async () => {
    const service = await testService()
    const signer = await service.signer(ADA.email)
    const { anchors, result } = await signedOnce(service.pdfSignature(signer))
    const record = anchors.records.get(result.signature.tx_hash)!
    record.timestamp -= 2 * 3600
    const late = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: service.published })
    expect(late.signatures[0]!.problems).toEqual([
      expect.stringMatching(/^its PDF signature was timestamped at \S+, 120 minutes after the anchor's block \(\S+\)$/),
    ])

    const untimed = await signedOnce(async (request) =>
      contentInfoDer(await buildSignedData({ signer, contentType: OID.data, messageDigest: fromHex(request.digest) })),
    )
    const check = await checkSignedPdf(untimed.result.bytes, {
      verify: untimed.anchors.verify,
      serviceCertificates: service.published,
    })
    expect(check.signatures[0]!.problems).toEqual([
      'its PDF signature does not name its anchor (made before signers had certificates)',
      'its PDF signature has no timestamp',
    ])
  })

  it('is invalid when its /ByteRange leaves out more than its own /Contents', async () => {
    const service = await testService()
    const published = service.published
    const { anchors, result } = await signedOnce(service.pdfSignature(await service.signer(ADA.email)))
    const text = Buffer.from(result.bytes).toString('latin1')
    const at = text.lastIndexOf('/ByteRange [0 ') + '/ByteRange [0 '.length
    const first = Number(text.slice(at, at + 10))
    const shifted = Buffer.from(text.slice(0, at) + String(first - 10).padEnd(10, ' ') + text.slice(at + 10), 'latin1')
    const check = await checkSignedPdf(new Uint8Array(shifted), {
      verify: anchors.verify,
      serviceCertificates: published,
    })
    expect(check.signatures[0]!.problems).toEqual([
      'its PDF signature is invalid: its /ByteRange leaves out more than its own /Contents',
    ])
  })
})
