// Which signatures of a file a later revision changed the document under, and how to say so. Shared by the checker
// (which calls such a signature not valid) and the signer (which refuses to add a signature to such a file).
import type { SignedPdf } from './read-signed-pdf.ts'
import type { RevisionChange } from './revision-changes.ts'

export interface SignedRevision {
  /** The revision that made the signature. */
  revision: number
  /** Whether changes of that revision itself count: yes for a revision made with its PDF signature, which vouches
   * for all of it; no for a version 1 signature, whose revision drew its code on the page and signed nothing. */
  ownRevisionCounts: boolean
}

/** The changes after a signature: from its own revision when that counts, else from the next. */
export function changesAfter(pdf: Pick<SignedPdf, 'changes'>, signed: SignedRevision): RevisionChange[] {
  const from = signed.ownRevisionCounts ? signed.revision : signed.revision + 1
  return pdf.changes.filter((change) => change.revision >= from)
}

/** "revision 2 changed page 1's content and page 1's resources, and revision 4 changed ...". */
export function describeChanges(changes: readonly RevisionChange[]): string {
  const byRevision = new Map<number, string[]>()
  for (const change of changes) {
    const known = byRevision.get(change.revision) ?? []
    if (!known.includes(change.what)) byRevision.set(change.revision, [...known, change.what])
  }
  return joinWords(
    [...byRevision]
      .sort(([a], [b]) => a - b)
      .map(([revision, whats]) => `revision ${revision} changed ${joinWords(whats)}`),
    ', and ',
  )
}

/** The problem of a signature followed by `changes`, in the words of issue-free verifiers: intact but not what is seen. */
export function changedAfterSigning(
  signed: SignedRevision,
  changes: readonly RevisionChange[],
  signer: string,
): string {
  const own = changes.filter((change) => change.revision === signed.revision)
  const later = changes.filter((change) => change.revision !== signed.revision)
  const parts: string[] = []
  if (own.length > 0)
    parts.push(`its own revision ${signed.revision} also changed ${joinWords(own.map((c) => c.what))}`)
  if (later.length > 0) parts.push(`${describeChanges(later)} afterwards`)
  return `signed revision ${signed.revision} is intact, but ${parts.join(', and ')}: what you see is not what ${signer} signed`
}

/** "a, b and c"; "a; b; and c" when a part has a comma of its own ("a form field, its value or its appearance"). */
function joinWords(words: readonly string[], last = ' and '): string {
  if (words.length <= 1) return words[0] ?? ''
  const ownComma = words.some((word) => /,(?![^(]*\))/.test(word))
  const [between, end] = ownComma ? ['; ', `;${last}`] : [', ', last]
  return `${words.slice(0, -1).join(between)}${end}${words[words.length - 1]}`
}

/** Every signature of the file, anchored or another product's, each with the revision that made it. */
export function signedRevisions(pdf: SignedPdf): (SignedRevision & { signer: string })[] {
  const found: (SignedRevision & { signer: string })[] = []
  let listed = 0
  for (const revision of pdf.revisions) {
    const signatures = revision.metadata?.signatures ?? []
    const withPdfSignature = pdf.pdfSignatures.some((field) => field.revision === revision.index)
    for (const signature of signatures.slice(listed)) {
      found.push({ revision: revision.index, ownRevisionCounts: withPdfSignature, signer: signature.signer_name })
    }
    listed = Math.max(listed, signatures.length)
  }
  for (const field of pdf.pdfSignatures) {
    if (found.some((known) => known.revision === field.revision)) continue
    found.push({
      revision: field.revision,
      ownRevisionCounts: false,
      signer: field.name === null ? 'another product’s signer' : `the signer of “${field.name}”`,
    })
  }
  return found.sort((a, b) => a.revision - b.revision)
}
