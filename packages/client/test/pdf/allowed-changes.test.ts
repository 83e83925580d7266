// What you see is what was signed: every attack of attacks.ts, made from a file Alice signed, fails her signature in
// checkSignedPdf with its message, before and after another product countersigns it, and signPdf refuses to add a
// signature to it; what may follow a signature (our countersignature, another product's, a DSS, a document
// timestamp, a rewritten /Info) keeps it valid.
import { HttpTimestampAuthority, PDF, PdfArray, PdfDict, PdfName, PdfNumber } from '@libpdf/core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type OpensslTsa, startOpensslTsa } from '../../../../test/helpers/pdf-signing/openssl-tsa.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { type SignPdfOptions, signPdf } from '../../src/pdf/sign-pdf.ts'
import { ATTACKS, attackableOriginal } from './attacks.ts'
import { signedByPoppler } from './other-signers.ts'
import { MemoryAnchors } from './portable-fixtures.ts'

const anchors = new MemoryAnchors()
const ALICE = { type: 'individual', name: 'Alice Example', email: 'alice@example.com' } as const
const CAROL = { type: 'individual', name: 'Carol Mallory', email: 'carol@example.com' } as const

function signAs(bytes: Uint8Array, signer: SignPdfOptions['signer']) {
  return signPdf(bytes, {
    signer,
    verifyBaseUrl: 'https://verify.example.com',
    anchor: anchors.anchor,
    pdfSignature: anchors.pdfSignature,
    chainId: 31337,
  })
}

async function refusal(bytes: Uint8Array): Promise<PdfError> {
  const error = await signAs(bytes, CAROL).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(PdfError)
  return error as PdfError
}

let signed: Uint8Array

beforeAll(async () => {
  signed = (await signAs(await attackableOriginal(), ALICE)).bytes
})

describe('a file Alice signed', () => {
  it('verifies, and her signature certifies it (DocMDP, form filling and signing allowed)', async () => {
    const result = await checkSignedPdf(signed, { verify: anchors.verify })
    expect(result.problems).toEqual([])
    expect(result.signatures[0]!.problems).toEqual([])
    expect(result.valid).toBe(true)
    const pdf = await readSignedPdf(signed)
    expect(pdf.certification).toEqual({ permissions: 2, revision: 2 })
    expect(pdf.changes).toEqual([])
  })

  it('keeps verifying after our countersignature, which certifies nothing', async () => {
    const countersigned = (await signAs(signed, CAROL)).bytes
    const result = await checkSignedPdf(countersigned, { verify: anchors.verify })
    expect(result.signatures.map((check) => check.problems)).toEqual([[], []])
    expect(result.valid).toBe(true)
    expect((await readSignedPdf(countersigned)).certification?.revision).toBe(2)
  })

  it('keeps verifying after another product countersigns it (poppler’s pdfsig)', async () => {
    const countersigned = await signedByPoppler(signed)
    const result = await checkSignedPdf(countersigned, { verify: anchors.verify })
    expect(result.signatures[0]!.problems).toEqual([])
    expect(result.otherSignatures.map((other) => other.status)).toEqual(['valid'])
    expect(result.problems).toEqual([])
  })

  describe('with validation data and a document timestamp', () => {
    let tsa: OpensslTsa
    beforeAll(async () => {
      tsa = await startOpensslTsa()
    })
    afterAll(() => tsa.close())

    it('keeps verifying after a DSS revision and a document timestamp revision', async () => {
      const pdf = await PDF.load(signed)
      const certificate = pdf.createStream({}, new Uint8Array([0x30, 0x03, 0x02, 0x01, 0x01]))
      pdf.getCatalog().set('DSS', PdfDict.of({ Certs: new PdfArray([certificate]) }))
      const withDss = await pdf.save({ incremental: true })
      const timestamped = await PDF.load(withDss)
      await timestamped.addTimestamp({ timestampAuthority: new HttpTimestampAuthority(tsa.url) })
      const bytes = await timestamped.save({ incremental: true })
      const read = await readSignedPdf(bytes)
      expect(read.revisions.length).toBeGreaterThanOrEqual(5)
      expect(read.changes).toEqual([])
      const result = await checkSignedPdf(bytes, { verify: anchors.verify })
      expect(result.signatures[0]!.problems).toEqual([])
      expect(result.otherSignatures.map((other) => other.subFilter)).toEqual(['ETSI.RFC3161'])
      expect(result.problems).toEqual([])
    })
  })

  it('keeps verifying after /Info is rewritten, with a note that says so', async () => {
    const pdf = await PDF.load(signed)
    pdf.setTitle('Another title')
    const bytes = await pdf.save({ incremental: true })
    const result = await checkSignedPdf(bytes, { verify: anchors.verify })
    expect(result.signatures[0]!.problems).toEqual([])
    expect(result.notes.map((note) => note.what)).toEqual(['the document information (title, author, dates)'])
    expect(result.problems).toEqual([])
  })

  it('an unsigned revision that changes the catalog fails it, naming the change', async () => {
    const pdf = await PDF.load(signed)
    pdf.getCatalog().set('PageLayout', PdfName.of('TwoColumnLeft'))
    const bytes = await pdf.save({ incremental: true })
    const result = await checkSignedPdf(bytes, { verify: anchors.verify })
    expect(result.signatures[0]!.problems).toEqual([
      'signed revision 2 is intact, but revision 3 changed the document catalog’s /PageLayout afterwards: what you see is not what Alice Example signed',
    ])
    expect(result.problems[0]).toMatch(/bytes were added after the last signature \(1 unsigned revision\)/)
  })
})

describe.each(ATTACKS)('$name', (attack) => {
  let attacked: Uint8Array
  beforeAll(async () => {
    attacked = await attack.make(signed)
  })

  it('fails Alice’s signature in checkSignedPdf, with its message', async () => {
    const result = await checkSignedPdf(attacked, { verify: anchors.verify })
    expect(result.valid).toBe(false)
    expect(result.signatures[0]!.valid).toBe(false)
    expect(result.signatures[0]!.problems.join('\n')).toMatch(attack.message)
  })

  it('still fails it after another product countersigns the file', async () => {
    const countersigned = await signedByPoppler(attacked)
    const result = await checkSignedPdf(countersigned, { verify: anchors.verify })
    expect(result.valid).toBe(false)
    expect(result.signatures[0]!.valid).toBe(false)
    expect(result.signatures[0]!.problems.join('\n')).toMatch(attack.message)
  })

  it('is refused by signPdf before anything is anchored', async () => {
    const before = anchors.records.size
    const error = await refusal(attacked)
    expect(error.code).toBe('ERR_PDF_MODIFIED')
    expect(error.message).toMatch(attack.message)
    expect(anchors.records.size).toBe(before)
  })
})

describe('a document certified elsewhere', () => {
  it('with no changes allowed (P=1) is refused before anything is anchored', async () => {
    const pdf = await PDF.load(await attackableOriginal())
    const signature = pdf.createDict({
      Type: PdfName.of('Sig'),
      Reference: new PdfArray([
        PdfDict.of({
          Type: PdfName.of('SigRef'),
          TransformMethod: PdfName.of('DocMDP'),
          TransformParams: PdfDict.of({ Type: PdfName.of('TransformParams'), P: PdfNumber.of(1) }),
        }),
      ]),
    })
    pdf.getCatalog().set('Perms', PdfDict.of({ DocMDP: signature }))
    const certified = await pdf.save({ incremental: true })
    const before = anchors.records.size
    const error = await refusal(certified)
    expect(error.code).toBe('ERR_PDF_MODIFIED')
    expect(error.message).toMatch(/certified by its author with no changes allowed \(DocMDP P=1\)/)
    expect(anchors.records.size).toBe(before)
  })
})
