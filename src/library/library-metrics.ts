// The library's Prometheus series: what became of each change a sync carried (request counts and latencies are the
// app's HTTP series). Many stale changes mean devices editing the same items out of step, or a clock that is behind.
import { Counter, type Registry } from 'prom-client'
import type { LibraryChanges, SkippedChange } from './library-types.ts'

const KINDS = [
  ['signature', 'signatures'],
  ['snippet', 'snippets'],
] as const
const OPS = ['upsert', 'delete'] as const

export interface LibraryMetrics {
  /** Counts a sync's changes: applied, or stale (lost to the newer state the server held). */
  countSync(changes: LibraryChanges, skipped: SkippedChange[]): void
}

export function createLibraryMetrics(registry: Registry): LibraryMetrics {
  const changesTotal = new Counter({
    name: 'library_sync_changes_total',
    help: 'Changes carried by library syncs, by kind, operation and result (applied, or stale: a newer state won)',
    labelNames: ['kind', 'op', 'result'],
    registers: [registry],
  })
  return {
    countSync(changes, skipped) {
      for (const [kind, list] of KINDS) {
        for (const op of OPS) {
          const carried = changes[list]?.[op]?.length ?? 0
          if (carried === 0) continue
          const stale = skipped.filter((change) => change.kind === kind && change.op === op).length
          changesTotal.inc({ kind, op, result: 'applied' }, carried - stale)
          if (stale > 0) changesTotal.inc({ kind, op, result: 'stale' }, stale)
        }
      }
    },
  }
}
