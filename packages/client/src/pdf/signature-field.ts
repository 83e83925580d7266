// What a signature revision adds to the document besides its metadata: a signature field whose widget shows the QR
// code and its caption (its normal appearance, a form XObject drawn by stamp-appearance.ts) on the chosen page, and the signature dictionary the field's value
// points to, with placeholders for /ByteRange and /Contents (signature-placeholder.ts). Page content is never
// touched: readers allow an approval signature to add a field, a widget in the page's /Annots and the form entries,
// so every earlier signature keeps "the document has not been modified".
import { type PDF, PdfArray, PdfDict, PdfName, PdfNumber, PdfRef, PdfString } from '@libpdf/core'
import type { PlacedStamp } from './page-geometry.ts'
import { byteRangePlaceholder, contentsPlaceholder } from './signature-placeholder.ts'
import { type QrModules, type StampLayout, stampContent } from './stamp-appearance.ts'

export interface SignatureFieldInput {
  /** 0-based page index. */
  pageIndex: number
  placed: PlacedStamp
  layout: StampLayout
  qr: QrModules
  /** The caption's lines, under the code. */
  caption: readonly string[]
  /** /Name: the signer's stated name. */
  signerName: string
  /** /Reason: what was anchored where. */
  reason: string
  /** /M: the signing time the payload states. */
  time: Date
  /**
   * Make it the document's certification signature (DocMDP, P=2: form filling and signing allowed), so that readers
   * hold every later revision to the changes our own checker allows. Only a document's first signature may.
   */
  certify?: boolean
}

/** DocMDP permissions: form filling, page templates and signing; nothing else (ISO 32000-1, table 254). */
const CERTIFIED_PERMISSIONS = 2

/** Print (4) and Locked (128): shown on paper, and not to be moved or deleted by a reader's user. */
const WIDGET_FLAGS = 132
/** Signatures exist (1) and the file is to be appended to, never rewritten (2). */
const SIG_FLAGS = 3

export function addSignatureField(pdf: PDF, input: SignatureFieldInput): void {
  const page = pdf.getPage(input.pageIndex)!
  const { rect, matrix } = input.placed
  const { layout } = input
  // Drawn upright in a box of the stamp's displayed size; /Matrix turns it against the page's /Rotate, and readers
  // map the turned box onto /Rect.
  const appearance = pdf.createStream(
    {
      Type: PdfName.of('XObject'),
      Subtype: PdfName.of('Form'),
      BBox: numbers([0, 0, layout.width, layout.height]),
      Matrix: numbers(matrix),
      Resources: PdfDict.of({
        Font: PdfDict.of({
          Helv: PdfDict.of({
            Type: PdfName.of('Font'),
            Subtype: PdfName.of('Type1'),
            BaseFont: PdfName.of('Helvetica'),
            Encoding: PdfName.of('WinAnsiEncoding'),
          }),
        }),
      }),
    },
    new TextEncoder().encode(stampContent(layout, input.qr, input.caption, 'Helv')),
  )
  const signature = pdf.createDict({
    Type: PdfName.of('Sig'),
    Filter: PdfName.of('Adobe.PPKLite'),
    SubFilter: PdfName.of('ETSI.CAdES.detached'),
    ByteRange: byteRangePlaceholder(),
    Contents: contentsPlaceholder(),
    M: PdfString.fromString(pdfDate(input.time)),
    Name: PdfString.fromString(input.signerName),
    Reason: PdfString.fromString(input.reason),
    ...(input.certify && {
      Reference: new PdfArray([
        PdfDict.of({
          Type: PdfName.of('SigRef'),
          TransformMethod: PdfName.of('DocMDP'),
          TransformParams: PdfDict.of({
            Type: PdfName.of('TransformParams'),
            P: PdfNumber.of(CERTIFIED_PERMISSIONS),
            V: PdfName.of('1.2'),
          }),
        }),
      ]),
    }),
  })
  if (input.certify) pdf.getCatalog().set('Perms', PdfDict.of({ DocMDP: signature }))
  const fields = formFields(pdf)
  const widget = pdf.createDict({
    Type: PdfName.of('Annot'),
    Subtype: PdfName.of('Widget'),
    FT: PdfName.of('Sig'),
    T: PdfString.fromString(uniqueName(pdf, fields)),
    V: signature,
    F: PdfNumber.of(WIDGET_FLAGS),
    P: page.ref,
    Rect: numbers(rect),
    AP: PdfDict.of({ N: appearance }),
  })
  fields.push(widget)
  const annots = resolved(pdf, page.dict.get('Annots'))
  if (annots instanceof PdfArray) annots.push(widget)
  else page.dict.set('Annots', new PdfArray([widget]))
}

/** The catalog's /AcroForm /Fields array, made when the document has no form; /SigFlags set. */
function formFields(pdf: PDF): PdfArray {
  const catalog = pdf.getCatalog()
  const existing = resolved(pdf, catalog.get('AcroForm'))
  const acroForm = existing instanceof PdfDict ? existing : PdfDict.of({})
  if (acroForm !== existing) catalog.set('AcroForm', pdf.register(acroForm))
  acroForm.set('SigFlags', PdfNumber.of(SIG_FLAGS))
  const fields = resolved(pdf, acroForm.get('Fields'))
  if (fields instanceof PdfArray) return fields
  const made = new PdfArray([])
  acroForm.set('Fields', made)
  return made
}

/** `Anchor signature N`, N the first number no top-level field of the form has. */
function uniqueName(pdf: PDF, fields: PdfArray): string {
  const taken = new Set<string>()
  for (const field of fields) {
    const dict = resolved(pdf, field)
    const name = dict instanceof PdfDict ? dict.get('T') : undefined
    if (name instanceof PdfString) taken.add(name.asString())
  }
  let n = 1
  while (taken.has(`Anchor signature ${n}`)) n++
  return `Anchor signature ${n}`
}

function resolved(pdf: PDF, value: unknown): unknown {
  return value instanceof PdfRef ? pdf.getObject(value) : value
}

function numbers(values: readonly number[]): PdfArray {
  return new PdfArray(values.map((value) => PdfNumber.of(value)))
}

/** `D:YYYYMMDDHHmmSSZ`, in UTC. */
function pdfDate(time: Date): string {
  const iso = time.toISOString()
  return `D:${iso.slice(0, 19).replace(/[-:T]/g, '')}Z`
}
