// The PDF signatures a file holds, ours and any other product's: every signature field of the form (/AcroForm
// /Fields and their /Kids, /FT inherited) with a value, read as the newest revision has it. Each keeps the revision
// whose cross-reference section defines its signature dictionary, which is where the signature was made.
import { damaged } from './pdf-errors.ts'
import { isDict, type PdfStructure, RevisionResolver } from './pdf-revisions.ts'
import { PdfName, PdfRef, PdfString, type PdfValue } from './pdf-syntax.ts'

export interface PdfSignatureField {
  /** The field's partial name (/T); null when it has none or the file is encrypted (its strings are). */
  name: string | null
  /** The revision whose section defines the signature dictionary. */
  revision: number
  /** /SubFilter, e.g. ETSI.CAdES.detached or adbe.pkcs7.detached. */
  subFilter: string | null
  /** /ByteRange as written; null when it is not four numbers. */
  byteRange: number[] | null
  /** /Contents: the CMS, as the file holds it (zero padding included); null when it is not a string. */
  contents: Uint8Array | null
}

/** Forms with more fields than this, or nested deeper, are not real forms. */
const MAX_FIELDS = 10_000
const MAX_DEPTH = 32

export async function readSignatureFields(
  structure: PdfStructure,
  decrypted?: (num: number, gen: number) => Uint8Array | undefined,
): Promise<PdfSignatureField[]> {
  const newest = structure.revisions.length - 1
  const resolver = new RevisionResolver(structure, newest, decrypted)
  const catalog = await resolver.resolve(structure.revisions[newest]!.trailer.get('Root'))
  if (!isDict(catalog)) return []
  const form = await resolver.resolve(catalog.get('AcroForm'))
  if (!isDict(form)) return []
  const top = await resolver.resolve(form.get('Fields'))
  if (!Array.isArray(top)) return []
  const encrypted = structure.encrypt !== undefined
  const found: PdfSignatureField[] = []
  const seen = new Set<number>()
  const queue: { value: PdfValue; type: string | undefined; depth: number }[] = top.map((value) => ({
    value,
    type: undefined,
    depth: 0,
  }))
  let visited = 0
  while (queue.length > 0) {
    const { value, type: inherited, depth } = queue.shift()!
    if (++visited > MAX_FIELDS || depth > MAX_DEPTH) throw damaged('its form has more fields than any real form')
    if (value instanceof PdfRef) {
      if (seen.has(value.num)) continue
      seen.add(value.num)
    }
    const field = await resolver.resolve(value)
    if (!isDict(field)) continue
    const type = nameOf(field.get('FT')) ?? inherited
    const kids = await resolver.resolve(field.get('Kids'))
    if (Array.isArray(kids)) queue.push(...kids.map((kid) => ({ value: kid, type, depth: depth + 1 })))
    const valueRef = field.get('V')
    if (type !== 'Sig' || valueRef === undefined) continue
    const signature = await resolver.resolve(valueRef)
    if (!isDict(signature)) continue
    const definedBy = valueRef instanceof PdfRef ? valueRef : value instanceof PdfRef ? value : undefined
    const byteRange = signature.get('ByteRange')
    const contents = signature.get('Contents')
    const name = field.get('T')
    found.push({
      name: !encrypted && name instanceof PdfString ? textString(name.bytes) : null,
      revision: definedBy ? (resolver.entryOf(definedBy.num)?.revision ?? newest) : newest,
      subFilter: nameOf(signature.get('SubFilter')) ?? null,
      byteRange:
        Array.isArray(byteRange) && byteRange.length === 4 && byteRange.every(Number.isInteger)
          ? (byteRange as number[])
          : null,
      contents: contents instanceof PdfString ? contents.bytes : null,
    })
  }
  return found
}

function nameOf(value: PdfValue | undefined): string | undefined {
  return value instanceof PdfName ? value.name : undefined
}

/** A PDF text string: UTF-16BE after its byte order mark, else PDFDocEncoding (read as Latin-1, its printable part). */
function textString(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2))
  return new TextDecoder('latin1').decode(bytes)
}
