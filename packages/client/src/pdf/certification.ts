// A certification signature (ISO 32000-1, 12.8.2.2): the first signature of a document may say which changes later
// revisions may make (DocMDP): 1 none, 2 filling in forms and signing, 3 also annotations. The catalog's /Perms
// /DocMDP names the signature dictionary, whose /Reference holds the permissions.
import { nameOf } from './document-reach.ts'
import { isDict, type PdfStructure, RevisionResolver } from './pdf-revisions.ts'
import { PdfRef } from './pdf-syntax.ts'

export interface Certification {
  /** 1: no changes; 2: form filling and signing; 3: also annotations. */
  permissions: 1 | 2 | 3
  /** The revision that defines the certifying signature's dictionary. */
  revision: number
}

export async function readCertification(
  structure: PdfStructure,
  decrypted?: (num: number, gen: number) => Uint8Array | undefined,
): Promise<Certification | null> {
  const newest = structure.revisions.length - 1
  const resolver = new RevisionResolver(structure, newest, decrypted)
  const catalog = await resolver.resolve(structure.revisions[newest]!.trailer.get('Root'))
  if (!isDict(catalog)) return null
  const perms = await resolver.resolve(catalog.get('Perms'))
  const ref = isDict(perms) ? perms.get('DocMDP') : undefined
  const signature = await resolver.resolve(ref)
  if (!isDict(signature)) return null
  const references = await resolver.resolve(signature.get('Reference'))
  let permissions: 1 | 2 | 3 = 2
  for (const item of Array.isArray(references) ? references : []) {
    const reference = await resolver.resolve(item)
    if (!isDict(reference) || nameOf(reference.get('TransformMethod')) !== 'DocMDP') continue
    const params = await resolver.resolve(reference.get('TransformParams'))
    const p = isDict(params) ? params.get('P') : undefined
    if (p === 1 || p === 3) permissions = p
  }
  const revision = ref instanceof PdfRef ? (resolver.entryOf(ref.num)?.revision ?? newest) : newest
  return { permissions, revision }
}
