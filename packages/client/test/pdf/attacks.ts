// The attacks on signed PDFs (incremental saving, signature wrapping, universal signature forgery, shadow attacks),
// made from a real signed file as an attacker would: ordinary incremental saves with @libpdf/core for the changes a
// reader shows, hand-written revisions and in-place edits for the tricks with the file's structure. Web APIs only.
// Nothing here is committed as a file: each test makes its attacks afresh.
import { PDF, PdfArray, PdfDict, PdfName, PdfNumber, PdfRef, PdfString } from '@libpdf/core'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { RevisionResolver, readPdfStructure } from '../../src/pdf/pdf-revisions.ts'
import { PdfRef as ReaderRef } from '../../src/pdf/pdf-syntax.ts'

export interface Attack {
  name: string
  /** What the checker's problem says, in part. */
  message: RegExp
  /** The attacked file, from a file Alice signed (`signed`) on an original made by `original` below. */
  make(signed: Uint8Array): Promise<Uint8Array>
}

const latin1 = new TextDecoder('latin1')
/** Text to bytes one to one, so that binary stream data copied as Latin-1 text is written back unchanged. */
const ascii = (text: string) => Uint8Array.from(text, (c) => c.charCodeAt(0))

/**
 * An original with a text field ("Amount") on page 1, and an unreferenced object whose stream data holds another
 * definition of page 1's content stream: what a shadow attacker prepares before the document is signed.
 */
export async function attackableOriginal(): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  const page = doc.addPage([595, 842])
  page.drawText('Ada Lovelace owes Carol Mallory 10 EUR.', { x: 50, y: 760, font, size: 18 })
  doc.addPage([595, 842]).drawText('Page two', { x: 50, y: 760, font, size: 18 })
  const field = doc.getForm().createTextField('Amount')
  field.setText('10 EUR')
  field.addToPage(page, { x: 50, y: 640, width: 200, height: 30 })
  const bytes = await doc.save({ useObjectStreams: false })
  const contents = await contentStreamOfFirstPage(bytes)
  const evil = 'BT /F1 18 Tf 50 700 Td (Ada Lovelace owes Carol Mallory 1,000,000 EUR, due today.) Tj ET'
  const hidden = `${contents} 0 obj\n<< /Length ${evil.length} >>\nstream\n${evil}\nendstream\nendobj\n`
  const structure = await readPdfStructure(bytes)
  const size = structure.revisions.at(-1)!.trailer.get('Size') as number
  return appendRevision(bytes, [{ num: size, body: `<< /Length ${hidden.length} >>\nstream\n${hidden}endstream` }])
}

async function contentStreamOfFirstPage(bytes: Uint8Array): Promise<number> {
  const pdf = await PDF.load(bytes)
  const contents = pdf.getPage(0)!.dict.get('Contents')
  const ref = contents instanceof PdfArray ? contents.at(0) : contents
  if (!(ref instanceof PdfRef)) throw new Error('page 1 has no content stream of its own')
  return ref.objectNumber
}

interface RawObject {
  num: number
  body: string
}

/**
 * Appends a hand-written revision: the objects, a cross-reference table (whose offsets `xref` may override) and a
 * trailer continuing the last one's. `twice` writes an object's definition a second time after the first.
 */
export async function appendRevision(
  bytes: Uint8Array,
  objects: RawObject[],
  options: { xref?: Map<number, number>; twice?: RawObject } = {},
): Promise<Uint8Array> {
  const structure = await readPdfStructure(bytes)
  const last = structure.revisions.at(-1)!
  const trailer = latin1.decode(bytes.subarray(last.xrefOffset))
  const root = /\/Root\s+(\d+\s+\d+\s+R)/.exec(trailer)![1]
  const info = /\/Info\s+(\d+\s+\d+\s+R)/.exec(trailer)?.[1]
  const size = Math.max(last.trailer.get('Size') as number, ...objects.map((object) => object.num + 1))
  let text = bytes[bytes.length - 1] === 0x0a ? '' : '\n'
  const offsets = new Map<number, number>()
  for (const object of objects) {
    offsets.set(object.num, bytes.length + text.length)
    text += `${object.num} 0 obj\n${object.body}\nendobj\n`
    if (options.twice?.num === object.num) text += `${object.num} 0 obj\n${options.twice.body}\nendobj\n`
  }
  const xrefAt = bytes.length + text.length
  text += 'xref\n'
  for (const [num, offset] of [...offsets].sort(([a], [b]) => a - b)) {
    const at = options.xref?.get(num) ?? offset
    text += `${num} 1\n${String(at).padStart(10, '0')} 00000 n \n`
  }
  text += `trailer\n<< /Size ${size} /Root ${root}${info ? ` /Info ${info}` : ''} /Prev ${last.xrefOffset} >>\n`
  text += `startxref\n${xrefAt}\n%%EOF\n`
  return concat(bytes, ascii(text))
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length)
  out.set(a)
  out.set(b, a.length)
  return out
}

/** An incremental save of `bytes` after `edit` changed the document. */
async function edited(bytes: Uint8Array, edit: (pdf: PDF) => void | Promise<void>): Promise<Uint8Array> {
  const pdf = await PDF.load(bytes)
  await edit(pdf)
  return pdf.save({ incremental: true })
}

/** The first signature dictionary's /ByteRange and /Contents, where the file holds them. */
function firstSignature(bytes: Uint8Array) {
  const text = latin1.decode(bytes)
  const range = /\/ByteRange\s*\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(text)!
  const numbers = range.slice(1, 5).map(Number) as [number, number, number, number]
  return { rangeAt: range.index, rangeText: range[0], numbers, contentsAt: numbers[1] }
}

/** Writes `text` over the bytes at `at`, padded with spaces to `width`. */
function overwrite(bytes: Uint8Array, at: number, text: string, width = text.length): Uint8Array {
  const out = bytes.slice()
  out.set(ascii(text.padEnd(width, ' ')), at)
  return out
}

const RED_BOX = '1 0 0 rg 0 0 200 40 re f BT /Helv 12 Tf 0 0 1 rg 5 15 Td (PAID IN FULL) Tj ET'

export const ATTACKS: Attack[] = [
  {
    name: 'content added to a page (incremental saving attack)',
    message: /revision \d+ changed page 1's resources.* and page 1's content afterwards: what you see is not what/,
    make: (signed) =>
      edited(signed, (pdf) => {
        pdf.getPage(0)!.drawText('Ada Lovelace owes Carol Mallory 1,000,000 EUR, due today.', { x: 50, y: 700 })
      }),
  },
  {
    name: 'a page replaced',
    message: /changed the page tree/,
    make: (signed) =>
      edited(signed, (pdf) => {
        const page = pdf.addPage({ size: 'a4' })
        page.drawText('This page replaces the one that was signed.', { x: 50, y: 760 })
        pdf.removePage(0)
        pdf.movePage(pdf.getPageCount() - 1, 0)
      }),
  },
  {
    name: 'an annotation added',
    message: /changed page 1's annotations \(one added\)/,
    make: (signed) =>
      edited(signed, (pdf) => {
        const page = pdf.getPage(0)!
        const note = pdf.createDict({
          Type: PdfName.of('Annot'),
          Subtype: PdfName.of('FreeText'),
          Rect: new PdfArray([50, 600, 400, 630].map((n) => PdfNumber.of(n))),
          Contents: PdfString.fromString('Amount: 1,000,000 EUR'),
          DA: PdfString.fromString('/Helv 14 Tf 1 0 0 rg'),
        })
        const annots = page.dict.get('Annots')
        const list = annots instanceof PdfRef ? pdf.getObject(annots) : annots
        ;(list as PdfArray).push(note)
      }),
  },
  {
    name: 'an annotation’s appearance changed (the signature widget’s)',
    message: /changed an annotation on page 1, or its appearance|changed a form field on page 1/,
    make: (signed) =>
      edited(signed, (pdf) => {
        const annots = pdf.getPage(0)!.dict.get('Annots')
        const list = (annots instanceof PdfRef ? pdf.getObject(annots) : annots) as PdfArray
        const widget = [...list]
          .map((item) => pdf.getObject(item as PdfRef) as PdfDict)
          .find((dict) => dict.get('FT') instanceof PdfName && (dict.get('FT') as PdfName).value === 'Sig')!
        const appearance = pdf.createStream(
          { Type: PdfName.of('XObject'), Subtype: PdfName.of('Form'), BBox: boxOf(200, 40) },
          ascii(RED_BOX),
        )
        widget.set('AP', PdfDict.of({ N: appearance }))
      }),
  },
  {
    name: 'a form field’s value and appearance changed',
    message: /changed a form field.* on page 1, its value or its appearance/,
    make: (signed) =>
      edited(signed, (pdf) => {
        pdf.getForm()!.getTextField('Amount')!.setValue('1,000,000 EUR')
      }),
  },
  {
    name: 'JavaScript run when the document opens (/OpenAction)',
    message: /changed JavaScript run when the document is opened or used/,
    make: (signed) =>
      edited(signed, (pdf) => {
        pdf
          .getCatalog()
          .set(
            'OpenAction',
            PdfDict.of({ S: PdfName.of('JavaScript'), JS: PdfString.fromString('app.alert("signed")') }),
          )
      }),
  },
  {
    name: 'an embedded file added',
    message: /changed the files embedded in the document/,
    make: (signed) =>
      edited(signed, (pdf) => {
        pdf.addAttachment('invoice.txt', ascii('Pay 1,000,000 EUR to Carol Mallory.'))
      }),
  },
  {
    name: 'an object defined twice in one revision, the table pointing at the unchanged copy',
    message: /revision \d+ is ambiguous: it defines object \d+ twice/,
    make: async (signed) => {
      const num = await contentStreamOfFirstPage(signed)
      const evil = 'BT /F1 18 Tf 50 700 Td (1,000,000 EUR) Tj ET'
      return appendRevision(signed, [{ num, body: await definitionOf(signed, num) }], {
        twice: { num, body: `<< /Length ${evil.length} >>\nstream\n${evil}\nendstream` },
      })
    },
  },
  {
    name: 'a cross-reference entry pointing a signed object at a definition hidden before signing (shadow attack)',
    message: /changed page 1's content afterwards|points object \d+ at byte \d+/,
    make: async (signed) => {
      const num = await contentStreamOfFirstPage(signed)
      const text = latin1.decode(signed)
      // The hidden definition inside the unreferenced stream of the original's second revision.
      const hidden = text.indexOf(`stream\n${num} 0 obj`) + 'stream\n'.length
      return appendRevision(signed, [{ num, body: '<< /Length 0 >>\nstream\n\nendstream' }], {
        xref: new Map([[num, hidden]]),
      })
    },
  },
  {
    name: 'a /ByteRange shortened, so that the end of its revision is signed by nobody',
    message: /it covers the file up to byte \d+, not up to the end of its revision/,
    make: async (signed) => {
      const { rangeAt, rangeText, numbers } = firstSignature(signed)
      const [a, b, c, d] = numbers
      return overwrite(signed, rangeAt, `/ByteRange [${a} ${b} ${c} ${d - 100}]`, rangeText.length)
    },
  },
  {
    name: 'a /ByteRange moved (signature wrapping)',
    message: /its \/ByteRange leaves out|its \/ByteRange does not describe/,
    make: async (signed) => {
      const { rangeAt, rangeText, numbers } = firstSignature(signed)
      const [a, b, c, d] = numbers
      return overwrite(signed, rangeAt, `/ByteRange [${a} ${b - 40} ${c} ${d}]`, rangeText.length)
    },
  },
  {
    name: 'an empty /Contents (universal signature forgery)',
    message: /its \/Contents is empty/,
    make: async (signed) => {
      const { numbers } = firstSignature(signed)
      return overwrite(signed, numbers[1] + 1, '0'.repeat(numbers[2] - numbers[1] - 2))
    },
  },
  {
    name: 'a /Contents with bytes that are not hex digits',
    message: /its \/ByteRange leaves out more than its own \/Contents/,
    make: async (signed) => {
      const { numbers } = firstSignature(signed)
      // A PDF hex string may hold white space, but then the gap no longer holds the signature alone.
      return overwrite(signed, numbers[2] - 3, '  ')
    },
  },
]

/** An object's definition as the file holds it, between `N G obj` and `endobj`, as Latin-1 text. */
async function definitionOf(bytes: Uint8Array, num: number): Promise<string> {
  const structure = await readPdfStructure(bytes)
  const resolver = new RevisionResolver(structure, structure.revisions.length - 1)
  const found = resolver.entryOf(num)
  if (found?.entry.type !== 'offset') throw new Error(`object ${num} is not at an offset`)
  const object = (await resolver.object(new ReaderRef(num, 0)))!
  const raw = latin1.decode(bytes.subarray(found.entry.offset, object.end))
  return raw.replace(/^\s*\d+\s+\d+\s+obj/, '').replace(/endobj\s*$/, '')
}

function boxOf(width: number, height: number): PdfArray {
  return new PdfArray([0, 0, width, height].map((n) => PdfNumber.of(n)))
}
