// What checkSignedPdf demands of the PDF signature an anchored signature's revision carries: made with the
// service's certificate (or its renewal: the same subject from the same CA), timestamped within the window of the
// anchor's block, its /ByteRange around its own /Contents only; and what it reports for signatures it did not make.
import type { Certificate } from 'pkijs'
import { describe, expect, it } from 'vitest'
import { developmentTimestampAuthority } from '../../../../src/pdf-signing/development-timestamp-authority.ts'
import {
  DEVELOPMENT_NAMES,
  identityOf,
  issueCertificate,
  makeIdentity,
} from '../../../../src/pdf-signing/issue-certificate.ts'
import { PdfSigner } from '../../../../src/pdf-signing/pdf-signer.ts'
import { fromHex } from '../../src/formats/hex.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { OID } from '../../src/pdf/cms/der.ts'
import { buildSignedData, contentInfoDer } from '../../src/pdf/cms/signed-data.ts'
import { webCryptoSigningKey } from '../../src/pdf/cms/signing-key.ts'
import type { PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'
import { signPdf } from '../../src/pdf/sign-pdf.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'

const ADA = { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' } as const
const BASE = 'https://verify.example.com'
const der = (certificate: Certificate) => new Uint8Array(certificate.toSchema(true).toBER(false))

/** A service identity: its published certificates, and a pdfSignature that signs with `signing` (default its own). */
async function service() {
  const { ca, signing, timestamping } = await makeIdentity()
  const identity = identityOf(ca, signing, timestamping)
  const published = [der(signing.certificate), der(ca.certificate)]
  const signWith =
    (signer = identity.signing) =>
    async (request: PdfSignatureRequest) =>
      (await new PdfSigner(signer, developmentTimestampAuthority(identity.timestamping)).sign(fromHex(request.digest)))
        .cms
  return { ca, identity, published, signWith }
}

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
  it('is the service’s when made with its published certificate, or with a renewal from the same CA', async () => {
    const { ca, identity, published, signWith } = await service()
    const renewal = await issueCertificate({ name: DEVELOPMENT_NAMES.signing, role: 'signing', issuer: ca })
    for (const signer of [
      identity.signing,
      { key: webCryptoSigningKey(renewal.privateKey), certificates: [renewal.certificate, ca.certificate] },
    ]) {
      const { anchors, result } = await signedOnce(signWith(signer))
      const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: published })
      expect(check.signatures[0]!.problems).toEqual([])
      expect(check.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', madeByService: true })
      expect(check.valid).toBe(true)
    }
  })

  it('is not the service’s when made with the same subject from another CA', async () => {
    const { published } = await service()
    const other = await service()
    const { anchors, result } = await signedOnce(other.signWith())
    const check = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: published })
    expect(check.signatures[0]!.pdfSignature).toMatchObject({ status: 'valid', madeByService: false })
    expect(check.signatures[0]!.problems).toEqual([
      `its PDF signature was not made with the service's certificate (CN=${DEVELOPMENT_NAMES.signing}, O=${DEVELOPMENT_NAMES.organization}, C=ZZ)`,
    ])
    expect(check.valid).toBe(false)
    // Without the service's certificates nobody's is demanded.
    expect((await checkSignedPdf(result.bytes, { verify: anchors.verify })).valid).toBe(true)
  })

  it('must be timestamped within the window of its anchor’s block, and timestamped at all', async () => {
    const { published, signWith, identity } = await service()
    const { anchors, result } = await signedOnce(signWith())
    const record = anchors.records.get(result.signature.tx_hash)!
    record.timestamp -= 2 * 3600
    const late = await checkSignedPdf(result.bytes, { verify: anchors.verify, serviceCertificates: published })
    expect(late.signatures[0]!.problems).toEqual([
      expect.stringMatching(/^its PDF signature was timestamped at \S+, 120 minutes after the anchor's block \(\S+\)$/),
    ])

    const untimed = await signedOnce(async (request) =>
      contentInfoDer(
        await buildSignedData({
          signer: identity.signing,
          contentType: OID.data,
          messageDigest: fromHex(request.digest),
        }),
      ),
    )
    const check = await checkSignedPdf(untimed.result.bytes, {
      verify: untimed.anchors.verify,
      serviceCertificates: published,
    })
    expect(check.signatures[0]!.problems).toEqual(['its PDF signature has no timestamp'])
  })

  it('is invalid when its /ByteRange leaves out more than its own /Contents', async () => {
    const { published, signWith } = await service()
    const { anchors, result } = await signedOnce(signWith())
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
