import { readdir, readFile } from 'node:fs/promises'
import { PDF, PdfName, PdfString } from '@libpdf/core'
import { AnnotationMode, getDocument, OPS } from 'pdfjs-dist/legacy/build/pdf.mjs'
import QRCode from 'qrcode'
import { beforeAll, describe, expect, it } from 'vitest'
import { buildAnchorPayload } from '../../src/formats/anchor-payload.ts'
import { compositeHash } from '../../src/formats/composite-hash.ts'
import { ZERO_TX_HASH } from '../../src/formats/constants.ts'
import { toHex } from '../../src/formats/hex.ts'
import { encryptPayload, generatePayloadKey } from '../../src/formats/payload-cipher.ts'
import { buildQrUrl } from '../../src/formats/qr-url.ts'
import { prepareSignatureRevision } from '../../src/pdf/append-signature-revision.ts'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { METADATA_CATALOG_KEY, readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { type SignPdfResult, signPdf } from '../../src/pdf/sign-pdf.ts'
import { qpdfCheck, qpdfTransform, scanQrCodes } from './fixtures.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'

const SIGNERS = [
  { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
  { type: 'company', name: 'Grace Hopper', email: 'grace@navy.example', company: 'Navy', position: 'Admiral' },
  { type: 'individual', name: 'Alan Turing', email: 'alan@example.org' },
] as const
const BASE = 'https://verify.example.com'

async function signThreeTimes(original: Uint8Array, anchors: MemoryAnchors) {
  const steps: SignPdfResult[] = []
  let bytes = original
  for (const [i, signer] of SIGNERS.entries()) {
    const result = await signPdf(bytes, {
      signer,
      geo: i === 1 ? { latitude: 52.520008, longitude: 13.404954 } : null,
      verifyBaseUrl: BASE,
      anchor: anchors.anchor,
      pdfSignature: anchors.pdfSignature,
      chainId: 31337,
      contractAddress: '0x5fbdb2315678afecb367f032d93f642f64180aa3',
    })
    steps.push(result)
    bytes = result.bytes
  }
  return steps
}

async function sha256(bytes: Uint8Array) {
  return toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
}

async function expectPdfError(promise: Promise<unknown>, code: PdfError['code'], message?: RegExp) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(PdfError)
  expect((error as PdfError).code).toBe(code)
  if (message) expect((error as PdfError).message).toMatch(message)
}

const producers: [string, () => Promise<Uint8Array>, 'table' | 'stream'][] = [
  ['pdf-lib, classic cross-reference table', () => pdfLibDocument(), 'table'],
  ['pdf-lib, object streams and a cross-reference stream', () => pdfLibDocument({ objectStreams: true }), 'stream'],
  [
    'qpdf --object-streams=generate (cross-reference stream with PNG predictor)',
    async () => qpdfTransform(await pdfLibDocument({ pages: 2 }), ['--object-streams=generate']),
    'stream',
  ],
  [
    'qpdf --qdf (uncompressed, classic table)',
    async () => qpdfTransform(await pdfLibDocument({ objectStreams: true }), ['--qdf', '--object-streams=disable']),
    'table',
  ],
  [
    'qpdf --linearize (first-page section whose /Prev points forward)',
    async () => qpdfTransform(await pdfLibDocument({ pages: 2 }), ['--linearize']),
    'table',
  ],
  [
    'a file that does not end with a newline',
    async () => {
      const bytes = await pdfLibDocument()
      return bytes[bytes.length - 1] === 0x0a ? bytes.subarray(0, bytes.length - 1) : bytes
    },
    'table',
  ],
]

describe('signPdf and checkSignedPdf', () => {
  describe.each(producers)('a PDF from %s', (_name, produce, kind) => {
    let original: Uint8Array
    let steps: SignPdfResult[]
    let anchors: MemoryAnchors

    beforeAll(async () => {
      original = await produce()
      anchors = new MemoryAnchors()
      steps = await signThreeTimes(original, anchors)
    })

    it('appends one revision per signature, keeping every earlier byte, and qpdf --check passes on each', async () => {
      let previous = original
      for (const [i, step] of steps.entries()) {
        expect(Buffer.from(step.bytes.subarray(0, previous.length)).equals(Buffer.from(previous))).toBe(true)
        expect(step.signedBytes).toBe(previous.length)
        expect(step.signature.doc_hash).toBe(await sha256(previous))
        expect(await qpdfCheck(step.bytes)).toMatch(/No syntax or stream encoding errors/)
        const pdf = await readSignedPdf(step.bytes)
        expect(pdf.revisions).toHaveLength(i + 2)
        expect(pdf.revisions[i + 1]!.metadata?.signatures).toHaveLength(i + 1)
        previous = step.bytes
      }
    })

    it('writes each revision with the cross-reference kind of the original', async () => {
      const pdf = await readSignedPdf(steps[2]!.bytes)
      expect(pdf.revisions.map((revision) => revision.xrefKind)).toEqual([kind, kind, kind, kind])
      expect(pdf.trailingBytes).toBe(0)
    })

    it('verifies three valid signatures in order, chained on the anchors', async () => {
      const result = await checkSignedPdf(steps[2]!.bytes, { verify: anchors.verify })
      expect(result.problems).toEqual([])
      expect(result.valid).toBe(true)
      expect(result.signatures.map((s) => [s.signature.signer_name, s.valid, s.documentHash, s.anchor])).toEqual(
        SIGNERS.map((signer) => [signer.name, true, 'match', 'found']),
      )
      expect(result.signatures.map((s) => s.payload)).toEqual(['decrypted', 'decrypted', 'decrypted'])
      expect(result.signatures.map((s) => s.anchorRecord?.previousTxHash)).toEqual([
        ZERO_TX_HASH,
        steps[0]!.signature.tx_hash,
        steps[1]!.signature.tx_hash,
      ])
      expect(result.unsignedBytes).toBeNull()
    })
  })

  describe('the stamped QR codes', () => {
    let steps: SignPdfResult[]

    beforeAll(async () => {
      steps = await signThreeTimes(await pdfLibDocument({ objectStreams: true }), new MemoryAnchors())
    })

    it('render with poppler and decode with zbar to exactly the QR URLs written', async () => {
      const scanned = await scanQrCodes(steps[2]!.bytes)
      expect(scanned.sort()).toEqual(steps.map((step) => step.qrUrl).sort())
      const metadata = (await readSignedPdf(steps[2]!.bytes)).revisions[3]!.metadata!
      expect(metadata.signatures.map((s) => s.qr_url)).toEqual(steps.map((step) => step.qrUrl))
    })

    it('open in pdf.js, which draws the three codes and their captions', async () => {
      const doc = await getDocument({ data: steps[2]!.bytes.slice(), verbosity: 0 }).promise
      expect(doc.numPages).toBe(1)
      const page = await doc.getPage(1)
      const operators = await page.getOperatorList({ annotationMode: AnnotationMode.ENABLE })
      // Each code is one filled path of its dark modules, in its widget's appearance.
      expect(operators.fnArray.filter((fn) => fn === OPS.constructPath).length).toBeGreaterThanOrEqual(3)
      // And the caption's two lines, as the glyphs pdf.js shows.
      const text = operators.fnArray.flatMap((fn, i) =>
        fn === OPS.showText
          ? [(operators.argsArray[i][0] as { unicode?: string }[]).map((glyph) => glyph.unicode ?? '').join('')]
          : [],
      )
      const date = new Date().toISOString().slice(0, 10)
      for (const signer of SIGNERS) expect(text).toContain(`Signed by ${signer.name}`)
      expect(text.filter((line) => line === `${date} · scan to verify`)).toHaveLength(3)
      await doc.destroy()
    })

    it('go where --page, --x, --y and --size put them', async () => {
      const two = await pdfLibDocument({ pages: 2 })
      const anchors = new MemoryAnchors()
      const prepared = await prepareSignatureRevision(two, { page: 2, x: 40, y: 500, size: 150 })
      // 150 pt of code, and 25.2 pt of caption (9 pt type) under it.
      expect(prepared.stamp).toEqual({ page: 2, x: 40, y: 500, size: 150, height: 175.2 })
      const { bytes, qrUrl } = await signPdf(two, {
        signer: SIGNERS[0],
        verifyBaseUrl: BASE,
        anchor: anchors.anchor,
        pdfSignature: anchors.pdfSignature,
        placement: { page: 2, x: 40, y: 500, size: 150 },
      })
      expect(await scanQrCodes(bytes, 1)).toEqual([])
      expect(await scanQrCodes(bytes, 2)).toEqual([qrUrl])
    })
  })

  describe('tampering', () => {
    let anchors: MemoryAnchors
    let steps: SignPdfResult[]
    let signed: Uint8Array

    beforeAll(async () => {
      anchors = new MemoryAnchors()
      steps = await signThreeTimes(await pdfLibDocument(), anchors)
      signed = steps[2]!.bytes
    })

    function changeByteAt(offset: number, value: number): Uint8Array {
      const copy = signed.slice()
      expect(copy[offset]).not.toBe(value)
      copy[offset] = value
      return copy
    }

    it('one changed byte of the original invalidates all three signatures', async () => {
      // The page height in the original's MediaBox: 842 becomes 843.
      const at = Buffer.from(signed).indexOf('842') + 2
      expect(at).toBeGreaterThan(2)
      expect(at).toBeLessThan(steps[0]!.signedBytes)
      const result = await checkSignedPdf(changeByteAt(at, 0x33), { verify: anchors.verify })
      expect(result.valid).toBe(false)
      expect(result.signatures.map((s) => s.documentHash)).toEqual(['mismatch', 'mismatch', 'mismatch'])
      for (const s of result.signatures) expect(s.problems.join()).toMatch(/changed since it was signed/)
    })

    it('one changed byte in the first signature revision invalidates every signature', async () => {
      // Where signature 1's stamp lies (its /Rect): inside revision 1, which signature 1's PDF signature covers, and
      // the document hashes of signatures 2 and 3.
      const revision1 = Buffer.from(signed.subarray(steps[0]!.signedBytes, steps[1]!.signedBytes))
      const at = steps[0]!.signedBytes + revision1.indexOf('/Rect [') + 8
      expect(at).toBeGreaterThan(steps[0]!.signedBytes)
      const result = await checkSignedPdf(changeByteAt(at - 1, signed[at - 1] === 0x30 ? 0x31 : 0x30), {
        verify: anchors.verify,
      })
      expect(result.signatures.map((s) => s.valid)).toEqual([false, false, false])
      expect(result.signatures[0]!.problems).toEqual([
        'its PDF signature is invalid: the document’s bytes are not what was signed',
      ])
      expect(result.signatures[1]!.problems).toEqual([
        `the first ${steps[0]!.bytes.length} bytes of the file changed since it was signed (document hash mismatch)`,
        'its PDF signature is invalid: the document’s bytes are not what was signed',
      ])
      expect(result.valid).toBe(false)
    })

    it('a metadata signer name that differs from the anchored payload fails that signature', async () => {
      const read = await readSignedPdf(signed)
      const latest = read.revisions[3]!.metadata!
      latest.signatures[2] = { ...latest.signatures[2]!, signer_name: 'Mallory' }
      const result = await checkSignedPdf(read, { verify: anchors.verify })
      expect(result.signatures.map((s) => s.valid)).toEqual([true, true, false])
      expect(result.signatures[2]!.payload).toBe('failed')
      expect(result.signatures[2]!.problems).toEqual([
        'the metadata differs from the anchored payload: signer_name',
        'the payload rebuilt from the metadata does not hash to the anchored composite hash',
      ])
    })

    it('bytes appended after the last revision are reported as unsigned changes', async () => {
      const appended = new Uint8Array([...signed, ...new TextEncoder().encode('% appended\n')])
      const result = await checkSignedPdf(appended, { verify: anchors.verify })
      expect(result.signatures.every((s) => s.valid)).toBe(true)
      expect(result.unsignedBytes).toEqual({ start: signed.length, length: 11, revisions: 0 })
      expect(result.problems).toEqual(['11 bytes were added after the last signature'])
      expect(result.valid).toBe(false)
    })

    it('an unsigned incremental update after the last signature is reported as such, and what it changed', async () => {
      const pdf = await PDF.load(signed)
      pdf.getCatalog().set('Lang', PdfString.fromString('en'))
      const updated = await pdf.save({ incremental: true })
      const result = await checkSignedPdf(updated, { verify: anchors.verify })
      expect(result.signatures.map((s) => s.valid)).toEqual([false, false, false])
      expect(result.signatures[2]!.problems).toEqual([
        'signed revision 3 is intact, but revision 4 changed the document catalog’s /Lang afterwards: what you see is not what Alan Turing signed',
      ])
      expect(result.signatures[2]!.changes).toEqual([
        { revision: 4, kind: 'catalog', pages: [], what: 'the document catalog’s /Lang' },
      ])
      expect(result.unsignedBytes).toMatchObject({ start: signed.length, revisions: 1 })
      expect(result.problems[0]).toMatch(/bytes were added after the last signature \(1 unsigned revision\)/)
      expect(result.valid).toBe(false)
    })

    it('a signature missing from the anchors fails with its transaction hash named', async () => {
      const txHash = steps[1]!.signature.tx_hash
      const record = anchors.records.get(txHash)!
      anchors.records.delete(txHash)
      try {
        const result = await checkSignedPdf(signed, { verify: anchors.verify })
        expect(result.signatures.map((s) => s.anchor)).toEqual(['found', 'not-found', 'found'])
        expect(result.signatures[1]!.problems).toEqual([`no anchor with transaction hash ${txHash} exists`])
      } finally {
        anchors.records.set(txHash, record)
      }
    })
  })

  describe('version 1 metadata', () => {
    // What an older writer produced: a QR code on the page and version 1 metadata (no qr_url, no salt).
    async function v1Pdf(anchors: MemoryAnchors) {
      const original = await pdfLibDocument()
      const payload = buildAnchorPayload({
        documentHash: await sha256(original),
        signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
        timestamp: 1763700000,
      })
      const serialized = JSON.stringify(payload)
      const key = generatePayloadKey()
      const hash = await compositeHash(serialized)
      const { txHash } = await anchors.anchor({
        compositeHash: hash,
        previousTxHash: ZERO_TX_HASH,
        encryptedPayload: await encryptPayload(serialized, key),
        salt: payload.salt,
      })
      const qrUrl = buildQrUrl({ verifyBaseUrl: BASE, txHash, key })
      const pdf = await PDF.load(original)
      const image = pdf.embedPng(new Uint8Array(await QRCode.toBuffer(qrUrl, { margin: 4, scale: 4 })))
      pdf.getPage(0)!.drawImage(image, { x: 420, y: 40, width: 120, height: 120 })
      const metadata = {
        version: 1,
        signatures: [
          {
            signer_name: 'Ada Lovelace',
            signer_email: 'ada@example.com',
            timestamp: '2025-11-21T04:40:00Z',
            doc_hash: payload.d,
            composite_hash: hash,
            tx_hash: txHash,
          },
        ],
      }
      const ref = pdf.createStream(
        { Type: PdfName.of('AnchorMetadata') },
        new TextEncoder().encode(JSON.stringify(metadata)),
      )
      pdf.getCatalog().set(METADATA_CATALOG_KEY, ref)
      return { bytes: await pdf.save({ incremental: true }), qrUrl }
    }

    it('reads as version 2 and verifies with the QR URL scanned from the page', async () => {
      const anchors = new MemoryAnchors()
      const { bytes, qrUrl } = await v1Pdf(anchors)
      const read = await readSignedPdf(bytes)
      expect(read.revisions[1]!.metadata?.signatures[0]).toMatchObject({
        signer_type: 'individual',
        qr_url: null,
        salt: null,
      })

      const without = await checkSignedPdf(bytes, { verify: anchors.verify })
      expect(without.valid).toBe(false)
      expect(without.signatures[0]!.documentHash).toBe('match')
      expect(without.signatures[0]!.problems).toEqual([
        'its metadata (version 1) has neither QR URL nor salt: give the QR URL printed on the page to check it',
      ])

      const scanned = await scanQrCodes(bytes)
      expect(scanned).toEqual([qrUrl])
      const withQr = await checkSignedPdf(bytes, { verify: anchors.verify, qrUrls: scanned })
      expect(withQr.problems).toEqual([])
      expect(withQr.signatures[0]).toMatchObject({ valid: true, payload: 'decrypted' })
      expect(withQr.valid).toBe(true)
    })

    it('can be signed again, the new metadata carrying the old signature as version 2', async () => {
      const anchors = new MemoryAnchors()
      const { bytes, qrUrl } = await v1Pdf(anchors)
      const next = await signPdf(bytes, {
        signer: SIGNERS[2],
        verifyBaseUrl: BASE,
        anchor: anchors.anchor,
        pdfSignature: anchors.pdfSignature,
      })
      expect(await qpdfCheck(next.bytes)).toMatch(/No syntax or stream encoding errors/)
      const result = await checkSignedPdf(next.bytes, { verify: anchors.verify, qrUrls: [qrUrl] })
      expect(result.signatures.map((s) => s.valid)).toEqual([true, true])
      expect(result.valid).toBe(true)
    })
  })

  describe('bad input', () => {
    it('refuses a file that is not a PDF', async () => {
      await expectPdfError(readSignedPdf(new TextEncoder().encode('hello, world\n')), 'ERR_NOT_PDF', /not a PDF/)
      await expectPdfError(prepareSignatureRevision(new Uint8Array(0)), 'ERR_NOT_PDF')
    })

    it('refuses an encrypted PDF with a user password it was not given', async () => {
      const encrypted = await qpdfTransform(await pdfLibDocument(), ['--encrypt', 'user', 'owner', '256', '--'])
      await expectPdfError(readSignedPdf(encrypted), 'ERR_PDF_PASSWORD', /password that is needed to open it/)
      await expectPdfError(prepareSignatureRevision(encrypted), 'ERR_PDF_PASSWORD')
    })

    it('refuses a damaged cross-reference table', async () => {
      const bytes = await pdfLibDocument()
      const text = Buffer.from(bytes).toString('latin1')
      const pointer = text.lastIndexOf('startxref') + 'startxref\n'.length
      // Far from any section (a pointer a few bytes off is tolerated: real-world.test.ts).
      const broken = bytes.slice()
      broken[pointer] = '1'.charCodeAt(0)
      broken[pointer + 1] = '0'.charCodeAt(0)
      broken[pointer + 2] = '0'.charCodeAt(0)
      await expectPdfError(
        readSignedPdf(broken),
        'ERR_PDF_DAMAGED',
        /the PDF is damaged: its cross-reference table is missing/,
      )
      await expectPdfError(readSignedPdf(bytes.subarray(0, bytes.length - 40)), 'ERR_PDF_DAMAGED', /startxref/)
    })

    it('reports a PDF without signatures', async () => {
      const result = await checkSignedPdf(await pdfLibDocument(), { verify: new MemoryAnchors().verify })
      expect(result).toMatchObject({ valid: false, signatures: [], problems: ['the PDF has no signatures'] })
    })

    it('refuses a page that does not exist', async () => {
      await expectPdfError(
        prepareSignatureRevision(await pdfLibDocument(), { page: 3 }),
        'ERR_PDF_UNSUPPORTED',
        /page 3 does not exist \(the PDF has 1\)/,
      )
    })
  })
})

describe('src/pdf', () => {
  it('uses Web APIs only, so the verification page runs the same reader and checker', async () => {
    const dir = new URL('../../src/pdf/', import.meta.url)
    const files = (await readdir(dir, { recursive: true })).filter((file) => file.endsWith('.ts'))
    expect(files).toContain('check-signed-pdf.ts')
    expect(files).toContain('cms/cms-signature.ts')
    for (const file of files) {
      const source = await readFile(new URL(file, dir), 'utf8')
      for (const [, specifier] of source.matchAll(/^import[^'"]*'([^']+)'/gm)) {
        expect(
          /^\.\.?\/[a-z0-9/.-]+\.ts$/.test(specifier!) ||
            ['@libpdf/core', 'qrcode', 'pkijs', 'asn1js'].includes(specifier!),
          `${file} imports ${specifier}`,
        ).toBe(true)
        expect(specifier, `${file} imports ${specifier}`).not.toMatch(/^\.\.\/(cli|api|db|chain)\//)
      }
      expect(source, file).not.toMatch(/\b(Buffer|process)\./)
    }
  })
})
