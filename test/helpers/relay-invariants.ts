// The relay's promise, checked from the chain and the database rather than from the service's answers: nothing doubled,
// nothing orphaned, "confirmed" only with the event, no reorg alert without a reorg, no nonce gap left behind.
import { sql } from 'drizzle-orm'
import { type Address, getAbiItem, type Hex, type PublicClient } from 'viem'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import type { Database } from '../../src/db/database.ts'
import { rows } from '../../src/db/sql-rows.ts'

export interface Acknowledged {
  compositeHash: string
  /** The tx hash the service answered as confirmed. */
  txHash: string
}

export interface RelayWorld {
  publicClient: PublicClient
  contract: Address
  relayers: readonly Address[]
  db: Database
  /** Every anchor a client was told is confirmed. */
  acknowledged: readonly Acknowledged[]
  /** The service's log lines over the run. */
  logLines: readonly string[]
}

/** Every broken promise, in words; empty when all hold. */
export async function relayPromiseBroken(world: RelayWorld): Promise<string[]> {
  const problems: string[] = []
  const logs = await world.publicClient.getLogs({
    address: world.contract,
    event: getAbiItem({ abi: documentAnchorsAbi, name: 'DocumentAnchored' }),
    fromBlock: 0n,
    toBlock: 'latest',
  })
  const events = new Map<string, Hex[]>()
  for (const log of logs) {
    const composite = log.args.compositeHash!.toLowerCase()
    events.set(composite, [...(events.get(composite) ?? []), log.transactionHash.toLowerCase() as Hex])
  }
  for (const [composite, txs] of events) {
    if (txs.length > 1) problems.push(`${composite} anchored ${txs.length} times on chain (${txs.join(', ')})`)
  }
  for (const { compositeHash, txHash } of world.acknowledged) {
    const onChain = events.get(compositeHash.toLowerCase()) ?? []
    if (onChain.length === 0) problems.push(`acknowledged ${compositeHash} is not on chain`)
    else if (onChain[0] !== txHash.toLowerCase()) {
      problems.push(`acknowledged ${compositeHash} under ${txHash}, on chain under ${onChain[0]}`)
    }
  }

  const anchors = await rows<{ composite_hash: string; tx_hash: string; status: string }>(
    world.db,
    sql`SELECT composite_hash, tx_hash, status FROM anchors`,
  )
  const byComposite = new Map(anchors.map((row) => [row.composite_hash, row]))
  for (const [composite, txs] of events) {
    const row = byComposite.get(composite)
    if (!row) problems.push(`${composite} is on chain without a record`)
    else if (row.status !== 'confirmed' || row.tx_hash !== txs[0]) {
      problems.push(`${composite} is on chain under ${txs[0]}, recorded ${row.status} under ${row.tx_hash}`)
    }
  }
  for (const row of anchors) {
    if (row.status === 'confirmed' && !events.get(row.composite_hash)?.includes(row.tx_hash as Hex)) {
      problems.push(`${row.composite_hash} recorded confirmed under ${row.tx_hash} without its event`)
    }
    if (row.status === 'pending') problems.push(`${row.composite_hash} still pending`)
  }

  const alarms = world.logLines.filter((line) => /ALERT|reorged out/.test(line))
  for (const line of alarms.slice(0, 5)) problems.push(`alarm without cause: ${line.trim().slice(0, 300)}`)

  for (const relayer of world.relayers) {
    const [latest, pending] = await Promise.all([
      world.publicClient.getTransactionCount({ address: relayer, blockTag: 'latest' }),
      world.publicClient.getTransactionCount({ address: relayer, blockTag: 'pending' }),
    ])
    if (pending !== latest) problems.push(`${relayer}: ${pending - latest} transactions left in the node's pool`)
    // Past what the chain consumed, only unsent fillers may hold nonces (the next relays reuse them).
    const held = await rows<{ nonce: unknown; kind: string }>(
      world.db,
      sql`SELECT nonce, 'anchor' AS kind FROM anchors WHERE relayer_address = ${relayer.toLowerCase()} AND nonce >= ${latest}
          UNION ALL
          SELECT nonce, 'transaction' AS kind FROM relay_transactions
          WHERE relayer_address = ${relayer.toLowerCase()} AND nonce >= ${latest}
            AND NOT (anchor_id IS NULL AND status = 'signed')`,
    )
    if (held.length > 0) {
      problems.push(`${relayer}: nonces ${held.map((r) => Number(r.nonce)).join(', ')} held but not mined`)
    }
    const [row] = await rows<{ next_nonce: unknown }>(
      world.db,
      sql`SELECT next_nonce FROM relayer_nonces WHERE relayer_address = ${relayer.toLowerCase()}`,
    )
    const fillers = await rows<{ n: unknown }>(
      world.db,
      sql`SELECT count(*) AS n FROM relay_transactions
          WHERE relayer_address = ${relayer.toLowerCase()} AND anchor_id IS NULL AND status = 'signed'
            AND nonce >= ${latest}`,
    )
    if (row && Number(row.next_nonce) !== latest + Number(fillers[0]?.n ?? 0)) {
      problems.push(`${relayer}: next nonce ${row.next_nonce} in the database, ${latest} used on chain`)
    }
  }
  return problems
}
