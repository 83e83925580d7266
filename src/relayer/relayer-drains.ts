// The shared record of relayer keys being rotated out: the owner's command line writes it, every instance's pool
// reads it on its monitor pass, and a key is revoked on chain only once nothing it sent is still open.
import { and, eq, inArray, sql } from 'drizzle-orm'
import type { Address } from 'viem'
import type { Database } from '../db/database.ts'
import { anchors, relayerDrains, relayTransactions } from '../db/schema.ts'

/** Lower-case addresses of this chain's draining keys. */
export async function drainingRelayers(db: Database, chainId: number): Promise<Set<Address>> {
  const rows = await db
    .select({ relayer: relayerDrains.relayerAddress })
    .from(relayerDrains)
    .where(eq(relayerDrains.chainId, chainId))
  return new Set(rows.map((row) => row.relayer as Address))
}

/** Marks the key draining; a key already draining keeps its first `since`. */
export async function startDrain(db: Database, chainId: number, relayer: Address): Promise<void> {
  await db.insert(relayerDrains).values({ chainId, relayerAddress: relayer.toLowerCase() }).onConflictDoNothing()
}

/** True when the key was draining. */
export async function stopDrain(db: Database, chainId: number, relayer: Address): Promise<boolean> {
  const removed = await db
    .delete(relayerDrains)
    .where(and(eq(relayerDrains.chainId, chainId), eq(relayerDrains.relayerAddress, relayer.toLowerCase())))
    .returning({ relayer: relayerDrains.relayerAddress })
  return removed.length > 0
}

export interface DrainState {
  /** Seconds since the drain began, by the database's clock; undefined when the key is not draining. */
  drainingForSeconds: number | undefined
  /** Its anchors not yet confirmed or failed, and its open gap fillers. */
  pending: number
}

export async function drainState(db: Database, chainId: number, relayer: Address): Promise<DrainState> {
  const address = relayer.toLowerCase()
  const [drain] = await db
    .select({ seconds: sql<string>`extract(epoch from now() - ${relayerDrains.since})` })
    .from(relayerDrains)
    .where(and(eq(relayerDrains.chainId, chainId), eq(relayerDrains.relayerAddress, address)))
  const [pendingAnchors] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(anchors)
    .where(and(eq(anchors.chainId, chainId), eq(anchors.relayerAddress, address), eq(anchors.status, 'pending')))
  const [openFillers] = await db
    .select({ n: sql<number>`count(*)::int` })
    .from(relayTransactions)
    .where(
      and(
        eq(relayTransactions.chainId, chainId),
        eq(relayTransactions.relayerAddress, address),
        sql`${relayTransactions.anchorId} IS NULL`,
        inArray(relayTransactions.status, ['signed', 'broadcast']),
      ),
    )
  return {
    drainingForSeconds: drain ? Number(drain.seconds) : undefined,
    pending: Number(pendingAnchors?.n ?? 0) + Number(openFillers?.n ?? 0),
  }
}
