// The Document Security Store (ISO 32000-2, 12.8.4.3; PAdES B-LT): the catalog's /DSS holds, as streams, the
// certificates, OCSP responses and CRLs a verifier needs to check the file's signatures and timestamps offline, years
// later. Read as the newest revision has it: later validation data only adds to what earlier revisions held.
import { type PdfStructure, RevisionResolver } from './pdf-revisions.ts'
import { PdfDict, PdfRef } from './pdf-syntax.ts'
import { decodeStream } from './stream-filters.ts'

export interface ValidationData {
  /** DER, as the DSS holds them. */
  certificates: Uint8Array[]
  ocspResponses: Uint8Array[]
  crls: Uint8Array[]
}

/** A CRL of a large CA runs to megabytes; one file's DSS holds at most a few dozen items of each kind. */
const MAX_ITEM_BYTES = 8 * 1024 * 1024
const MAX_ITEMS = 200

export const NO_VALIDATION_DATA: ValidationData = { certificates: [], ocspResponses: [], crls: [] }

export async function readValidationData(
  structure: PdfStructure,
  decrypted?: (num: number, gen: number) => Uint8Array | undefined,
): Promise<ValidationData> {
  const newest = structure.revisions.length - 1
  const resolver = new RevisionResolver(structure, newest, decrypted)
  const catalog = await resolver.resolve(structure.revisions[newest]!.trailer.get('Root'))
  const dss = catalog instanceof PdfDict ? await resolver.resolve(catalog.get('DSS')) : undefined
  if (!(dss instanceof PdfDict)) return NO_VALIDATION_DATA
  const streams = async (key: string): Promise<Uint8Array[]> => {
    const list = await resolver.resolve(dss.get(key))
    if (!Array.isArray(list)) return []
    const items: Uint8Array[] = []
    for (const ref of list.slice(0, MAX_ITEMS)) {
      if (!(ref instanceof PdfRef)) continue
      // An item that cannot be read is no evidence: the checks then say what is missing. What is decoded counts
      // against the file's read budget, which a DSS of deflate bombs exhausts as any other stream would.
      const stream = await resolver.stream(ref).catch(() => undefined)
      const { budget } = structure
      const data = stream && (await decodeStream(stream, budget.decodedLeft(MAX_ITEM_BYTES)).catch(() => undefined))
      if (!data) continue
      budget.spendDecoded(data.length)
      items.push(data)
    }
    return items
  }
  return { certificates: await streams('Certs'), ocspResponses: await streams('OCSPs'), crls: await streams('CRLs') }
}
