// Reserving an anchor: its quota count and nonce, in one database call shared with the relays arriving meanwhile.
import { groupFor } from '../group-commit.ts'
import { type NewAnchor, type ReserveResult, reserveAnchors } from '../outbox/reservations.ts'
import type { Slot } from '../outbox/slot.ts'
import type { RelayContext } from '../relay-context.ts'

export function reserve(context: RelayContext, slot: Slot, anchor: NewAnchor): Promise<ReserveResult> {
  const { db, quota, batches } = context
  return groupFor(batches.reservations, slot.relayer, (items: NewAnchor[]) =>
    reserveAnchors(db, slot, items, quota),
  ).submit(anchor)
}
