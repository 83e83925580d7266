// Group commit: while one write is in flight, the writes that arrive queue up and go together in the next one. Alone,
// a write goes at once (no added latency); under load, N relays share one statement (PGlite runs every statement on
// the one thread that also serves requests, so statements per relay bound the throughput).

export class GroupCommit<T, R> {
  private queue: { item: T; resolve(result: R): void; reject(error: unknown): void }[] = []
  private flushing = false

  constructor(
    private readonly write: (items: T[]) => Promise<R[]>,
    private readonly maxBatch = 500,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.queue.push({ item, resolve, reject })
      if (!this.flushing) void this.flush()
    })
  }

  private async flush(): Promise<void> {
    this.flushing = true
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, this.maxBatch)
        try {
          const results = await this.write(batch.map((entry) => entry.item))
          for (const [i, entry] of batch.entries()) entry.resolve(results[i]!)
        } catch (error) {
          for (const entry of batch) entry.reject(error)
        }
      }
    } finally {
      this.flushing = false
    }
  }
}

/** The batcher of one key (a relayer's slot, say): batches never mix keys. */
export function groupFor<T, R>(
  groups: Map<string, GroupCommit<T, R>>,
  key: string,
  write: (items: T[]) => Promise<R[]>,
): GroupCommit<T, R> {
  let group = groups.get(key)
  if (!group) {
    group = new GroupCommit(write)
    groups.set(key, group)
  }
  return group
}
