// Reduces one request's changes of one kind to at most one change per id, by the same last-write-wins rule the
// database applies, so that the batched statements never meet an id twice.

import type { ItemDeletion, LibraryKind, SkippedChange } from './library-types.ts'

interface Candidate<T> {
  op: 'upsert' | 'delete'
  clock: number
  upsert?: T
  deletion?: ItemDeletion
}

export interface ResolvedChanges<T> {
  upserts: T[]
  deletes: ItemDeletion[]
  /** Changes that lost to a newer change of the same id in the same request. */
  skipped: SkippedChange[]
}

/**
 * The winner per id: the newest clock (`updatedAt`, `deletedAt`); on equal clocks a deletion beats an upsert, and
 * between two upserts the first one stays, as it would had they arrived one after the other. A loser identical to
 * its winner (a repeated change) is not reported as skipped: it changed nothing.
 */
export function resolveDuplicates<T extends { id: string; updatedAt: string }>(
  kind: LibraryKind,
  upserts: readonly T[],
  deletes: readonly ItemDeletion[],
  sameContent: (a: T, b: T) => boolean,
): ResolvedChanges<T> {
  const winners = new Map<string, Candidate<T>>()
  const skipped: SkippedChange[] = []
  const offer = (candidate: Candidate<T>, id: string) => {
    const current = winners.get(id)
    if (current === undefined) {
      winners.set(id, candidate)
      return
    }
    const [winner, loser] = beats(candidate, current) ? [candidate, current] : [current, candidate]
    winners.set(id, winner)
    if (!identical(winner, loser, sameContent)) skipped.push({ kind, id, op: loser.op, reason: 'stale' })
  }
  for (const item of upserts) offer({ op: 'upsert', clock: Date.parse(item.updatedAt), upsert: item }, item.id)
  for (const deletion of deletes) offer({ op: 'delete', clock: Date.parse(deletion.deletedAt), deletion }, deletion.id)

  const resolved: ResolvedChanges<T> = { upserts: [], deletes: [], skipped }
  for (const candidate of winners.values()) {
    if (candidate.upsert !== undefined) resolved.upserts.push(candidate.upsert)
    if (candidate.deletion !== undefined) resolved.deletes.push(candidate.deletion)
  }
  return resolved
}

/** Whether `challenger`, arriving after `holder`, replaces it. */
function beats<T>(challenger: Candidate<T>, holder: Candidate<T>): boolean {
  if (challenger.clock !== holder.clock) return challenger.clock > holder.clock
  return challenger.op === 'delete' && holder.op === 'upsert'
}

function identical<T>(a: Candidate<T>, b: Candidate<T>, sameContent: (a: T, b: T) => boolean): boolean {
  if (a.op !== b.op || a.clock !== b.clock) return false
  return a.upsert === undefined || b.upsert === undefined || sameContent(a.upsert, b.upsert)
}
