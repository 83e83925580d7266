// What the two devices of each user sent to the library, and the library last-write-wins makes of it: per item, the
// change with the latest clock (`updatedAt`, or `deletedAt` for a deletion) wins, whichever device sent it when.
export type LibraryKind = 'signatures' | 'snippets'

export interface LibraryChange {
  kind: LibraryKind
  id: string
  /** The change's clock, ms since the epoch; unique per item so that no two changes tie. */
  at: number
  /** Undefined for a deletion. */
  label: string | undefined
  /**
   * The last request that carried it, from its start to its answer (ms since the epoch): when it was written, if it
   * was. A database that forgets commits may lose it only if that span touches what was forgotten.
   */
  lastSent?: { from: number; to: number }
}

/** An item as the model expects it: its winning change (`label` undefined: deleted). */
export type ModelItem = Omit<LibraryChange, 'kind'>

export class LibraryModel {
  /** user → kind:id → winning change. */
  private readonly winners = new Map<string, Map<string, LibraryChange>>()
  private readonly clocks = new Set<string>()

  /** A clock for a change of `id` at `at`, moved on by a millisecond while another change of the item holds it. */
  uniqueClock(user: string, kind: LibraryKind, id: string, at: number): number {
    let clock = at
    while (this.clocks.has(`${user}:${kind}:${id}:${clock}`)) clock += 1
    this.clocks.add(`${user}:${kind}:${id}:${clock}`)
    return clock
  }

  /** Every change put on the wire, whether or not its request got an answer: each is re-sent until one does. */
  sent(user: string, change: LibraryChange): void {
    let items = this.winners.get(user)
    if (!items) {
      items = new Map()
      this.winners.set(user, items)
    }
    const key = `${change.kind}:${change.id}`
    const current = items.get(key)
    if (!current || change.at > current.at) items.set(key, change)
  }

  users(): string[] {
    return [...this.winners.keys()]
  }

  expected(user: string, kind: LibraryKind): ModelItem[] {
    return [...(this.winners.get(user)?.values() ?? [])]
      .filter((change) => change.kind === kind)
      .map(({ kind: _kind, ...item }) => item)
  }
}
