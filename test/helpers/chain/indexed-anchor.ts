// The row a relay writes for an anchor a test sent on chain itself, with the service's relayer key. A service running
// beside the test may have found that transaction first: its monitor reconciles with the chain once the key's nonce
// passes the database's (src/relayer/actions/reconcile.ts) and records the anchor without payload or owner. The test's
// row then takes that one's place, as if the relay had written it.
import type { Database } from '../../../src/db/database.ts'
import { anchors } from '../../../src/db/schema.ts'

export async function indexAnchor(db: Database, row: typeof anchors.$inferInsert): Promise<void> {
  await db
    .insert(anchors)
    .values(row)
    .onConflictDoUpdate({ target: anchors.txHash, set: { ...row, reconciledAt: null } })
}
