// A form that asks readers to draw its fields themselves (/NeedAppearances true, as pdfTeX's hyperref writes it) is
// redrawn whole by poppler (Evince, Okular, pdftoppm), signature widgets included, and poppler draws nothing for a
// signature: the QR code would vanish. Acrobat, when it signs such a form, draws every field's appearance and clears
// the flag; so does the first signature here. The signer signs the file as it then shows everywhere. Once a file is
// signed, neither may change (an earlier signer saw the fields as the readers drew them), so a later signature
// leaves the flag and says that poppler will not show its code.
import { type PDF, PdfBool, PdfDict, PdfRef } from '@libpdf/core'

/** Whether the form asks readers to draw its fields' appearances. */
export function needsAppearances(pdf: PDF): boolean {
  const form = resolve(pdf, pdf.getCatalog().get('AcroForm'))
  const flag = form instanceof PdfDict ? resolve(pdf, form.get('NeedAppearances')) : undefined
  return flag instanceof PdfBool && flag.value
}

/** Draws every field's appearance as the library lays it out, and clears /NeedAppearances. */
export async function drawFormAppearances(pdf: PDF): Promise<void> {
  const form = (await pdf.getForm())?.acroForm()
  // The library draws only the fields it marks as changed: all of them, here.
  form?.markAllNeedAppearanceUpdate()
  form?.updateAppearances({ forceRegenerate: true })
  const dict = resolve(pdf, pdf.getCatalog().get('AcroForm'))
  if (dict instanceof PdfDict) dict.delete('NeedAppearances')
}

export const UNDRAWN_CODE_WARNING =
  'the file asks readers to draw its form fields themselves (/NeedAppearances), and an earlier signature forbids ' +
  'changing that: readers built on poppler (Evince, Okular, pdftoppm) will not show this QR code, others will'

function resolve(pdf: PDF, value: unknown): unknown {
  return value instanceof PdfRef ? pdf.getObject(value) : value
}
