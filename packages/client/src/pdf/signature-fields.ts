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
  /**
   * Where the signature dictionary's object lies in the file, [start, end); null when it is not an object of its own
   * at a byte offset (a direct value, or an object compressed in an object stream, whose /Contents no /ByteRange can
   * leave out).
   */
  dictionarySpan: [number, number] | null
  /**
   * Whether the field, as its own revision has it, already points at this signature dictionary: a later revision
   * that points a field at an older signature makes a signature appear where none was made.
   */
  madeInItsRevision: boolean
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
    const revision = definedBy ? (resolver.entryOf(definedBy.num)?.revision ?? newest) : newest
    const byteRange = signature.get('ByteRange')
    const contents = signature.get('Contents')
    const name = field.get('T')
    found.push({
      name: !encrypted && name instanceof PdfString ? textString(name.bytes) : null,
      revision,
      dictionarySpan: valueRef instanceof PdfRef ? await spanOf(resolver, valueRef) : null,
      madeInItsRevision: await fieldPointsAt(structure, revision, value, valueRef, decrypted),
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

async function spanOf(resolver: RevisionResolver, ref: PdfRef): Promise<[number, number] | null> {
  const found = resolver.entryOf(ref.num)
  if (found?.entry.type !== 'offset') return null
  const object = await resolver.object(ref)
  return object ? [found.entry.offset, object.end] : null
}

/** The field as `revision` has it names the same signature dictionary as the newest revision does. */
async function fieldPointsAt(
  structure: PdfStructure,
  revision: number,
  field: PdfValue,
  valueRef: PdfValue,
  decrypted?: (num: number, gen: number) => Uint8Array | undefined,
): Promise<boolean> {
  // A field that is a direct value is written anew with its parent, so the value only counts where it is defined.
  if (!(field instanceof PdfRef)) return true
  const then = await new RevisionResolver(structure, revision, decrypted).resolve(field)
  if (!isDict(then)) return false
  const value = then.get('V')
  return valueRef instanceof PdfRef
    ? value instanceof PdfRef && value.num === valueRef.num && value.gen === valueRef.gen
    : value !== undefined
}

function nameOf(value: PdfValue | undefined): string | undefined {
  return value instanceof PdfName ? value.name : undefined
}

/** A PDF text string: UTF-16BE after its byte order mark, else PDFDocEncoding (read as Latin-1, its printable part). */
function textString(bytes: Uint8Array): string {
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return new TextDecoder('utf-16be').decode(bytes.subarray(2))
  return new TextDecoder('latin1').decode(bytes)
}
