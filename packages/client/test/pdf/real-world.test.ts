// PDFs as they arrive from elsewhere: encrypted with an owner password (or a user password), signed before by other
// tools, with cross-reference pointers a few bytes off or a damaged table, with pages whose boxes do not start at 0 0
// or that are turned. Each is signed (twice), verified, still opened by qpdf and poppler, its QR codes decoded from
// the visible page, and any earlier signature of another tool still valid in pdfsig.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDF } from '@libpdf/core'
import { degrees, PDFBool, PDFDocument, PDFName, StandardFonts } from 'pdf-lib'
import { describe, expect, it } from 'vitest'
import { checkSignedPdf } from '../../src/pdf/check-signed-pdf.ts'
import { drawFormAppearances } from '../../src/pdf/form-appearances.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { type SignPdfOptions, signPdf } from '../../src/pdf/sign-pdf.ts'
import {
  mutoolComplaints,
  qpdfCheck,
  qpdfTransform,
  qpdfWarnings,
  renderPage,
  scanQrCodes,
  withTempDir,
} from './fixtures.ts'
import { pdfsigReport, signedByPoppler, signedBySignpdf } from './other-signers.ts'
import { MemoryAnchors, pdfLibDocument } from './portable-fixtures.ts'

const run = promisify(execFile)
const BASE = 'https://verify.example.com'
const ADA = { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' } as const
const GRACE = { type: 'individual', name: 'Grace Hopper', email: 'grace@navy.example' } as const

/** `signPdf` as this file's tests call it: `signer` anchoring through `anchors`, and any other options. */
function signWith(
  anchors: MemoryAnchors,
  pdf: Uint8Array,
  signer: SignPdfOptions['signer'],
  options: Partial<SignPdfOptions> = {},
) {
  return signPdf(pdf, {
    signer,
    verifyBaseUrl: BASE,
    anchor: anchors.anchor,
    pdfSignature: anchors.pdfSignature,
    ...options,
  })
}

/** Signs `pdf` twice (Ada, then Grace) and checks both signatures. */
async function signTwice(pdf: Uint8Array, options: { password?: string; page?: number; damaged?: boolean } = {}) {
  const anchors = new MemoryAnchors()
  const placement = options.page === undefined ? undefined : { page: options.page }
  const { password } = options
  const first = await signWith(anchors, pdf, ADA, { placement, password })
  const second = await signWith(anchors, first.bytes, GRACE, { placement, password })
  const result = await checkSignedPdf(second.bytes, { verify: anchors.verify, password: options.password })
  expect(result.signatures.map((check) => [check.signature.signer_name, check.valid])).toEqual([
    ['Ada Lovelace', true],
    ['Grace Hopper', true],
  ])
  expect(result.valid).toBe(true)
  // Every earlier byte kept.
  expect(Buffer.from(second.bytes.subarray(0, pdf.length)).equals(Buffer.from(pdf))).toBe(true)
  if (options.damaged) {
    // qpdf repairs what was damaged before, and finds nothing new to repair in what was appended.
    expect(await qpdfWarnings(second.bytes)).toEqual(await qpdfWarnings(pdf))
  } else {
    const open = password === undefined ? [] : [`--password=${password}`]
    expect(await qpdfCheck(second.bytes, open)).toMatch(/No syntax or stream encoding errors/)
  }
  return { bytes: second.bytes, qrUrls: [first.qrUrl, second.qrUrl] }
}

/** Renders the page's visible (crop) box and decodes its QR codes with their orientation. */
async function visibleCodes(pdf: Uint8Array, page = 1): Promise<{ data: string; orientation: string }[]> {
  const dir = await mkdtemp(join(tmpdir(), 'anchor-visible-'))
  try {
    await renderPage(dir, pdf, page, { cropbox: true })
    const { stdout } = await run('zbarimg', [
      '--quiet',
      '--xml',
      '-Sdisable',
      '-Sqrcode.enable',
      join(dir, 'page.png'),
    ]).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }))
    return [...stdout.matchAll(/orientation='(\w+)'[\s\S]*?<data><!\[CDATA\[(.*?)\]\]><\/data>/g)].map((m) => ({
      orientation: m[1]!,
      data: m[2]!,
    }))
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

describe('encrypted PDFs', () => {
  for (const [name, args] of [
    ['AES-256', ['--encrypt', '', 'owner-secret', '256', '--']],
    ['AES-128', ['--encrypt', '', 'owner-secret', '128', '--use-aes=y', '--']],
    ['RC4-128', ['--allow-weak-crypto', '--encrypt', '', 'owner-secret', '128', '--use-aes=n', '--']],
  ] as const) {
    it(`signs and verifies one with an owner password only (${name}), which every reader still opens`, async () => {
      const encrypted = await qpdfTransform(await pdfLibDocument(), [...args])
      const { bytes, qrUrls } = await signTwice(encrypted)
      const pdf = await readSignedPdf(bytes)
      expect(pdf.encrypted).toBe(true)
      expect(pdf.revisions.at(-1)!.metadata!.signatures).toHaveLength(2)
      // The metadata stream in the file is encrypted like every other: its JSON is not there in clear.
      expect(Buffer.from(bytes).includes('"signer_name"')).toBe(false)
      expect((await visibleCodes(bytes)).map((code) => code.data).sort()).toEqual([...qrUrls].sort())
    })
  }

  it('needs the user password of a file that has one, and says so when it is missing or wrong', async () => {
    const locked = await qpdfTransform(await pdfLibDocument(), [
      '--encrypt',
      'user-secret',
      'owner-secret',
      '256',
      '--',
    ])
    for (const password of [undefined, 'wrong']) {
      const error = await readSignedPdf(locked, { password }).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(PdfError)
      expect((error as PdfError).code).toBe('ERR_PDF_PASSWORD')
    }
    await signTwice(locked, { password: 'user-secret' })
  })
})

describe('PDFs signed by other tools', () => {
  it('signs a PDF @signpdf signed (startxref one byte early), and its signature stays valid in pdfsig', async () => {
    const other = await signedBySignpdf(await pdfLibDocument())
    expect((await pdfsigReport(other)).signatures.map((s) => s.validation)).toEqual(['Signature is Valid.'])
    const { bytes } = await signTwice(other)
    // Its signature first, then ours: all three intact.
    expect((await pdfsigReport(bytes)).signatures.map((s) => s.validation)).toEqual(
      Array(3).fill('Signature is Valid.'),
    )
  })

  it('signs a PDF poppler signed, and its signature stays valid in pdfsig', async () => {
    const other = await signedByPoppler(await pdfLibDocument())
    const { bytes } = await signTwice(other)
    expect((await pdfsigReport(bytes)).signatures.map((s) => s.validation)).toEqual(
      Array(3).fill('Signature is Valid.'),
    )
  })
})

describe('damaged cross-reference data other readers accept', () => {
  const startxrefOf = (bytes: Uint8Array) => {
    const text = Buffer.from(bytes).toString('latin1')
    const at = text.lastIndexOf('startxref') + 'startxref'.length
    const match = /\s+(\d+)/.exec(text.slice(at))!
    return {
      at: at + match.index + match[0].length - match[1]!.length,
      value: Number(match[1]),
      width: match[1]!.length,
    }
  }
  const withStartxref = (bytes: Uint8Array, value: number) => {
    const pointer = startxrefOf(bytes)
    const digits = String(value).padStart(pointer.width, '0')
    expect(digits).toHaveLength(pointer.width)
    const out = bytes.slice()
    for (let i = 0; i < digits.length; i++) out[pointer.at + i] = digits.charCodeAt(i)
    return out
  }

  for (const shift of [-3, -1, 2, 5]) {
    it(`reads and signs a file whose startxref is ${shift} bytes off, leaving its bytes untouched`, async () => {
      const bytes = await pdfLibDocument()
      const off = withStartxref(bytes, startxrefOf(bytes).value + shift)
      expect((await readSignedPdf(off)).revisions).toHaveLength(1)
      await signTwice(off)
    })
  }

  it('reconstructs a cross-reference entry that misses its object by scanning for it', async () => {
    const bytes = await pdfLibDocument()
    const text = Buffer.from(bytes).toString('latin1')
    const entry = text.indexOf(' 00000 n')
    const shifted = bytes.slice()
    shifted[entry - 1] = shifted[entry - 1] === 0x31 ? 0x32 : 0x31
    expect((await qpdfWarnings(shifted)).length).toBeGreaterThan(0)
    await signTwice(shifted, { damaged: true })
  })

  it('explains a pointer nothing is near in a user’s words', async () => {
    const bytes = await pdfLibDocument()
    const error = (await readSignedPdf(withStartxref(bytes, 12)).catch((e: unknown) => e)) as PdfError
    expect(error.code).toBe('ERR_PDF_DAMAGED')
    expect(error.message).toBe(
      'the PDF is damaged: its cross-reference table is missing: nothing near byte 12, where it should be, can be read',
    )
  })

  it('says first in a user’s words what cannot be read, then where and what the parser found', async () => {
    const text = Buffer.from(await pdfLibDocument()).toString('latin1')
    // A date's time zone where the catalog's /Pages reference should be: what a careless writer left in the file.
    const broken = text.replace(/\/Pages \d+ 0 R/, "/Pages 00'00' 0 R")
    expect(broken).not.toBe(text)
    const error = (await readSignedPdf(Buffer.from(broken, 'latin1')).catch((e: unknown) => e)) as PdfError
    expect(error.code).toBe('ERR_PDF_DAMAGED')
    // Where the word ends: the byte a repairer opens the file at.
    const at = broken.indexOf("00'00'") + "00'00'".length
    expect(error.message).toBe(`the PDF is damaged: its structure cannot be read at byte ${at} (unexpected "00'00'")`)
  })
})

describe('cross-reference data lost, rebuilt from the objects as qpdf, MuPDF and poppler rebuild it', () => {
  const latin1 = (bytes: Uint8Array) => Buffer.from(bytes).toString('latin1')
  const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, 'latin1'))
  /** The file with its last startxref saying `value`, in as many digits as that takes. */
  const pointingTo = (bytes: Uint8Array, value: number) => {
    const text = latin1(bytes).replace(/startxref\s+\d+(\s+%%EOF\s*)$/, (_, eof) => `startxref\n${value}${eof}`)
    expect(text).not.toBe(latin1(bytes))
    return bytesOf(text)
  }
  const firstObject = (bytes: Uint8Array) => latin1(bytes).search(/\d+ 0 obj/)
  /** What `mutool info` says of the document: its information dictionary and page count. */
  const mutoolInfo = (pdf: Uint8Array) =>
    withTempDir(async (dir) => {
      await writeFile(join(dir, 'f.pdf'), pdf)
      return (await run('mutool', ['info', join(dir, 'f.pdf')])).stdout
    })
  const pagesOf = async (pdf: Uint8Array) => /^Pages: \d+$/m.exec(await mutoolInfo(pdf))?.[0]

  const lost: [string, () => Promise<Uint8Array>][] = [
    [
      'a startxref pointing at the first object, digits fewer than its table’s offset has',
      async () => {
        const bytes = await pdfLibDocument()
        return pointingTo(bytes, firstObject(bytes))
      },
    ],
    ['a startxref pointing past the end of the file', async () => pointingTo(await pdfLibDocument(), 9_999_999)],
    [
      'a cross-reference table cut out, its trailer left',
      async () => bytesOf(latin1(await pdfLibDocument()).replace(/\nxref\n[\s\S]*?(?=trailer)/, '\n')),
    ],
    [
      'no cross-reference table and no trailer: the objects alone',
      async () => bytesOf(latin1(await pdfLibDocument()).replace(/\nxref\n[\s\S]*$/, '\n')),
    ],
    [
      'a startxref pointing at an object, in a file of object streams and a cross-reference stream',
      async () => {
        const bytes = await pdfLibDocument({ objectStreams: true })
        return pointingTo(bytes, firstObject(bytes))
      },
    ],
    [
      'a startxref pointing at an object, in a file of qpdf with object streams and an update after it',
      async () => {
        const streams = await qpdfTransform(await pdfLibDocument({ pages: 2 }), ['--object-streams=generate'])
        const pdf = await PDF.load(streams)
        pdf.setTitle('Updated')
        const updated = await pdf.save({ incremental: true })
        expect(Buffer.from(updated.subarray(0, streams.length)).equals(Buffer.from(streams))).toBe(true)
        return pointingTo(updated, firstObject(updated))
      },
    ],
  ]

  it('rebuilds a file updated after it was written as its last update has it', async () => {
    const [, make] = lost.at(-1)!
    const { bytes } = await signTwice(await make())
    // The update's title: its Info object comes later in the file than the one in the object stream it replaces.
    expect(await mutoolInfo(bytes)).toMatch(/\/Title\(Updated\)/)
  })

  for (const [name, make] of lost) {
    it(`signs a file with ${name}, which every reader then opens as it is`, async () => {
      const original = await make()
      // The damage is real: MuPDF repairs the file to open it; qpdf tries to (it finds no trailer to rebuild a file of
      // cross-reference streams from: MuPDF alone opens those).
      expect((await qpdfWarnings(original)).join('\n')).toMatch(/reconstruct/i)
      expect((await mutoolComplaints(original)).join('\n')).toMatch(/repair/)
      expect((await readSignedPdf(original).catch((e: unknown) => e)) as PdfError).toMatchObject({
        code: 'ERR_PDF_DAMAGED',
      })
      // Signed twice, verified, the original bytes untouched in front, qpdf --check clean.
      const { bytes } = await signTwice(original)
      expect(await pagesOf(bytes)).toEqual(await pagesOf(original))
      expect((await pdfsigReport(bytes)).signatures.map((s) => s.validation)).toEqual(
        Array(2).fill('Signature is Valid.'),
      )
      expect(await mutoolComplaints(bytes)).toEqual([])
      // The rebuilt section is a revision before the first signature, and the first signature covers it.
      const pdf = await readSignedPdf(bytes)
      expect(pdf.revisions).toHaveLength(3)
      expect(pdf.revisions[0]!.end).toBeGreaterThan(original.length)
      expect(pdf.revisions[0]!.metadata).toBeNull()
    })
  }

  it('no longer verifies the signature once a byte of the original is changed', async () => {
    const original = pointingTo(await pdfLibDocument(), 9_999_999)
    const anchors = new MemoryAnchors()
    const signed = await signWith(anchors, original, ADA)
    expect((await checkSignedPdf(signed.bytes, { verify: anchors.verify })).valid).toBe(true)
    // The page a byte narrower, in the original's part of the file.
    const forged = bytesOf(latin1(signed.bytes).replace('/MediaBox [ 0 0 595 842 ]', '/MediaBox [ 0 0 594 842 ]'))
    expect(latin1(forged).indexOf('594 842')).toBeLessThan(original.length)
    const result = await checkSignedPdf(forged, { verify: anchors.verify })
    expect(result.valid).toBe(false)
    expect(result.signatures[0]!.documentHash).toBe('mismatch')
  })

  it('does not rebuild the cross-reference data of a file that holds signatures, nor of an encrypted file', async () => {
    const anchors = new MemoryAnchors()
    const signed = await signWith(anchors, await pdfLibDocument(), ADA)
    const encrypted = await qpdfTransform(await pdfLibDocument(), ['--encrypt', '', 'owner-secret', '256', '--'])
    for (const [file, why] of [
      [signed.bytes, /it is not rebuilt, because the file holds signatures: one rebuilt section would hide the/],
      [encrypted, /it is not rebuilt, because the file is encrypted/],
    ] as const) {
      const error = (await signWith(anchors, pointingTo(file, 9_999_999), GRACE).catch((e: unknown) => e)) as PdfError
      expect(error).toBeInstanceOf(PdfError)
      expect(error.code).toBe('ERR_PDF_DAMAGED')
      expect(error.message).toMatch(/^the PDF is damaged: its cross-reference pointer points outside the file/)
      expect(error.message).toMatch(why)
    }
    // Nothing was anchored for them.
    expect(anchors.records.size).toBe(1)
  })
})

/** A form as pdfTeX's hyperref writes one: filled fields with no appearances, and /NeedAppearances true. */
async function formAskingReadersToDraw(): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const page = doc.addPage([595, 842])
  page.drawText('Application form', { x: 72, y: 760, size: 16, font: await doc.embedFont(StandardFonts.Helvetica) })
  const form = doc.getForm()
  const name = form.createTextField('applicant')
  name.setText('Ada Lovelace')
  name.addToPage(page, { x: 72, y: 700, width: 220, height: 22 })
  const agree = form.createCheckBox('agree')
  agree.addToPage(page, { x: 72, y: 660, width: 14, height: 14 })
  agree.check()
  form.acroForm.dict.set(PDFName.of('NeedAppearances'), PDFBool.True)
  return doc.save({ updateFieldAppearances: false })
}

describe('forms that ask readers to draw their fields (/NeedAppearances)', () => {
  it('are drawn by the first signature, so poppler and MuPDF both show every code, decodable at 100 dpi', async () => {
    const form = await formAskingReadersToDraw()
    const { bytes, qrUrls } = await signTwice(form)
    for (const renderer of ['pdftoppm', 'mutool'] as const) {
      expect((await scanQrCodes(bytes, 1, { dpi: 100, renderer })).sort(), renderer).toEqual([...qrUrls].sort())
    }
    const text = await withTempDir(async (dir) => {
      await writeFile(join(dir, 'f.pdf'), bytes)
      return (await run('mutool', ['draw', '-q', '-F', 'txt', join(dir, 'f.pdf'), '1'])).stdout
    })
    // The fields' values, drawn now by the signature, and the codes' captions.
    expect(text).toContain('Ada Lovelace')
    expect(text).toContain('Signed by Grace Hopper')
    expect(text).toMatch(/\d{4}-\d\d-\d\d · scan to verify/)
    const pdf = await readSignedPdf(bytes)
    expect(pdf.pdfSignatures).toHaveLength(2)
  })

  it('keep the flag once another tool signed them, and the signature says which readers will not show its code', async () => {
    const signedElsewhere = await signedByPoppler(await formAskingReadersToDraw())
    const anchors = new MemoryAnchors()
    const result = await signWith(anchors, signedElsewhere, ADA)
    expect(result.warnings).toEqual([expect.stringContaining('will not show this QR code')])
    const checked = await checkSignedPdf(result.bytes, { verify: anchors.verify })
    expect(checked.signatures[0]!.valid).toBe(true)
    expect(await scanQrCodes(result.bytes, 1, { renderer: 'mutool' })).toEqual([result.qrUrl])
    // The other tool's signature saw nothing change.
    expect((await pdfsigReport(result.bytes)).signatures[0]!.validation).toBe('Signature is Valid.')
  })

  it('may not be drawn after a signature: fields redrawn then are a change', async () => {
    const signedElsewhere = await signedByPoppler(await formAskingReadersToDraw())
    const pdf = await PDF.load(signedElsewhere)
    await drawFormAppearances(pdf)
    const redrawn = await pdf.save({ incremental: true })
    const changes = (await readSignedPdf(redrawn)).changes.map((change) => change.what)
    expect(changes).toContain('the form’s settings (/NeedAppearances)')
    expect(changes.some((what) => what.startsWith('a form field on page 1, its value or its appearance'))).toBe(true)
  })
})

describe('page geometry', () => {
  /** Page 1: MediaBox [100 200 695 1042] and CropBox [60 342 400 782] as the issue found them; page 2: /Rotate 90. */
  async function awkwardPages(): Promise<Uint8Array> {
    const doc = await PDFDocument.create()
    const font = await doc.embedFont(StandardFonts.Helvetica)
    const first = doc.addPage([595, 842])
    first.setMediaBox(100, 200, 595, 842)
    first.setCropBox(60, 342, 340, 440)
    first.drawText('Offset boxes', { x: 200, y: 600, font, size: 20 })
    for (const rotation of [90, 180, 270]) {
      const page = doc.addPage([595, 842])
      page.setRotation(degrees(rotation))
      page.drawText(`Turned ${rotation}`, { x: 60, y: 760, font, size: 20 })
    }
    return doc.save({ useObjectStreams: false })
  }

  it('puts both default codes inside the visible box of a page whose boxes do not start at 0 0', async () => {
    const { bytes, qrUrls } = await signTwice(await awkwardPages())
    const codes = await visibleCodes(bytes, 1)
    expect(codes.map((code) => code.data).sort()).toEqual([...qrUrls].sort())
  })

  for (const page of [2, 3, 4]) {
    it(`draws both codes upright in the corner of a turned page (page ${page})`, async () => {
      const { bytes, qrUrls } = await signTwice(await awkwardPages(), { page })
      const codes = await visibleCodes(bytes, page)
      expect(codes.map((code) => code.data).sort()).toEqual([...qrUrls].sort())
      expect(codes.map((code) => code.orientation)).toEqual(['UP', 'UP'])
    })
  }

  it('places a default code inside the visible box after one placed by hand, on an offset and on a turned page', async () => {
    for (const page of [1, 2]) {
      const anchors = new MemoryAnchors()
      const byHand = await signWith(anchors, await awkwardPages(), ADA, {
        placement: { page, x: 10, y: 120, size: 100 },
      })
      const byDefault = await signWith(anchors, byHand.bytes, GRACE, { placement: { page } })
      const codes = await visibleCodes(byDefault.bytes, page)
      expect(codes.map((code) => code.data).sort(), `page ${page}`).toEqual([byHand.qrUrl, byDefault.qrUrl].sort())
    }
  })

  it('refuses a code off the page or of an unreadable size before anything is anchored, naming the ranges', async () => {
    const anchors = new MemoryAnchors()
    const pdf = await awkwardPages()
    for (const [placement, words] of [
      // The visible box is the CropBox clipped to the MediaBox: 300 × 440 pt.
      // The stamp is the code's 96 pt and 20.16 pt of caption under it.
      [
        { x: 5000, y: 5000 },
        /x must be between 0 and 204 and y between 0 and 323\.84 for a code of 96 pt \(its stamp, caption included, is 96 × 116\.16 pt; the page shows 300 × 440 pt\)/,
      ],
      [{ x: -50, y: 10 }, /x must be between 0 and/],
      [{ size: 20 }, /between 36 and 1000 pt/],
      [{ page: 9 }, /page 9 does not exist \(the PDF has 4\)/],
    ] as const) {
      await expect(signWith(anchors, pdf, ADA, { placement })).rejects.toThrow(words)
    }
    expect(anchors.records.size).toBe(0)
  })
})
