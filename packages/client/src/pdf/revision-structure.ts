// The structure of incremental revisions, as the attacks on PDF signatures abuse it: an object defined twice in one
// revision, or defined outside its cross-reference section, or a cross-reference entry that points where its object
// is not. Readers differ on such files (one follows the table, another rebuilds it from the objects it finds), so a
// signature over one may show one reader what another never sees.
import { damaged } from './pdf-errors.ts'
import { definesObject, OBJECT_HEADER, type PdfStructure, RevisionResolver } from './pdf-revisions.ts'
import { PdfRef } from './pdf-syntax.ts'

export interface StructureProblem {
  revision: number
  problem: string
}

const latin1 = new TextDecoder('latin1')

/** The problem in a reader's words, for the checker's report and the signer's refusal alike. */
export function describeStructureProblem({ revision, problem }: StructureProblem): string {
  return `revision ${revision} is ambiguous: ${problem}, so readers may show different documents`
}

/** The problems of every incremental revision from `from` on (revision 0 is its producer's, and not an update). */
export async function findStructureProblems(structure: PdfStructure, from: number): Promise<StructureProblem[]> {
  const problems: StructureProblem[] = []
  const { bytes } = structure
  const sectionStarts = new Set(structure.sections.map((section) => section.offset))
  for (const revision of structure.revisions.slice(Math.max(1, from))) {
    const report = (problem: string) => problems.push({ revision: revision.index, problem })
    const resolver = new RevisionResolver(structure, revision.index)
    /** Objects of the section, by where they start, and the bytes each takes. */
    const spans: [number, number][] = []
    const starts = new Map<number, number>()
    for (const [num, entry] of revision.entries) {
      if (entry.type !== 'offset') continue
      if (entry.offset < revision.start || entry.offset >= revision.end || !definesObject(bytes, entry.offset, num)) {
        report(`its cross-reference section points object ${num} at byte ${entry.offset}, where that object is not`)
        continue
      }
      const object = await resolver.object(new PdfRef(num, entry.gen)).catch(() => {
        throw damaged(`object ${num} of revision ${revision.index} cannot be read`)
      })
      if (object) spans.push([entry.offset, object.end])
      starts.set(entry.offset, num)
    }
    spans.sort((a, b) => a[0] - b[0])
    const text = latin1.decode(bytes.subarray(revision.start, revision.end))
    for (const match of text.matchAll(OBJECT_HEADER)) {
      const at = revision.start + match.index
      if (starts.has(at) || sectionStarts.has(at) || inside(spans, at)) continue
      const num = Number(match[1])
      report(
        revision.entries.has(num)
          ? `it defines object ${num} twice (at byte ${at} too), and readers may show either`
          : `it defines object ${num} at byte ${at} outside its cross-reference section, where a reader that rebuilds the table would take it`,
      )
    }
  }
  return problems
}

/** Whether `at` lies strictly inside one of the sorted, non-overlapping spans. */
function inside(spans: [number, number][], at: number): boolean {
  let low = 0
  let high = spans.length - 1
  while (low <= high) {
    const middle = (low + high) >> 1
    const [start, end] = spans[middle]!
    if (at <= start) high = middle - 1
    else if (at >= end) low = middle + 1
    else return true
  }
  return false
}
