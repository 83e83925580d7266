// Every transition of src/relayer/outbox/transitions.ts, made by its real writer from every status: the row moves to
// the transition's `to` exactly when its status is one the transition leaves, and stays as it was otherwise.
import { randomBytes } from 'node:crypto'
import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import type { Database } from '../../src/db/database.ts'
import { ANCHOR_STATUSES, RELAY_TRANSACTION_STATUSES } from '../../src/db/schema.ts'
import { markMined } from '../../src/relayer/outbox/anchors.ts'
import {
  addReplacement,
  claimForBroadcast,
  markFillerDone,
  reopenMined,
} from '../../src/relayer/outbox/monitor-queries.ts'
import { ensureNonceRow, nonceAuthorityPastChain } from '../../src/relayer/outbox/nonces.ts'
import { type ChainAnchor, recordChainAnchor } from '../../src/relayer/outbox/reconciled-anchors.ts'
import { reissueAnchor } from '../../src/relayer/outbox/reservations.ts'
import type { Slot } from '../../src/relayer/outbox/slot.ts'
import {
  ANCHOR_TRANSITIONS,
  type AnchorStatus,
  RELAY_TRANSACTION_TRANSITIONS,
  type RelayTransactionStatus,
  type Transition,
} from '../../src/relayer/outbox/transitions.ts'
import type { SignedTransaction } from '../../src/relayer/signing.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { query, randomHash } from './relay-helpers.ts'

const NONCE = 5
const BLOCK_HASH = `0x${'b'.repeat(64)}` as Hex
/** Events name it; the transitions do not depend on it. */
const CONTRACT = `0x${'c'.repeat(40)}`

describe('the outbox transitions, each by its writer from every status', () => {
  let database: TestDatabase
  let db: Database
  let slot: Slot

  beforeAll(async () => {
    database = await createTestDatabase()
    db = database.handle.db
  })
  afterAll(async () => database?.close())

  beforeEach(async () => {
    // A relayer of its own per case: no row of another case shares its nonces.
    slot = { chainId: 31337, relayer: `0x${randomBytes(20).toString('hex')}` }
    await ensureNonceRow(db, slot, NONCE + 1)
  })

  async function insertAnchor(status: AnchorStatus, options: { nonce?: number; txHash?: Hex } = {}) {
    const [row] = await query<{ id: string }>(
      db,
      sql`INSERT INTO anchors (tx_hash, composite_hash, previous_tx_hash, encrypted_payload, status, block_number,
                               chain_id, relayer_address, nonce)
          VALUES (${options.txHash ?? randomHash()}, ${randomHash()}, ${ZERO_TX_HASH}, 'ciphertext', ${status},
                  ${status === 'pending' ? null : 7}, ${slot.chainId}, ${slot.relayer}, ${options.nonce ?? NONCE})
          RETURNING id`,
    )
    return row!.id
  }

  async function insertTransaction(anchorId: string | null, status: RelayTransactionStatus, txHash = randomHash()) {
    await db.execute(
      sql`INSERT INTO relay_transactions (tx_hash, anchor_id, chain_id, relayer_address, nonce, raw_transaction,
                                          max_fee_per_gas, max_priority_fee_per_gas, status)
          VALUES (${txHash}, ${anchorId}, ${slot.chainId}, ${slot.relayer}, ${NONCE}, '0x02', '2000000000',
                  '1000000000', ${status})`,
    )
    return txHash
  }

  const nextNonce = async () =>
    Number(
      (
        await query<{ next_nonce: string }>(
          db,
          sql`SELECT next_nonce FROM relayer_nonces WHERE chain_id = ${slot.chainId} AND relayer_address = ${slot.relayer}`,
        )
      )[0]!.next_nonce,
    )
  const anchorStatus = async (id: string) =>
    (await query<{ status: string }>(db, sql`SELECT status FROM anchors WHERE id = ${id}`))[0]?.status
  const transactionStatus = async (txHash: string) =>
    (await query<{ status: string }>(db, sql`SELECT status FROM relay_transactions WHERE tx_hash = ${txHash}`))[0]
      ?.status

  const signed = (): SignedTransaction => ({
    hash: randomHash(),
    raw: '0x02',
    fees: { maxFeePerGas: 2_000_000_000n, maxPriorityFeePerGas: 1_000_000_000n },
  })
  const mined = (compositeHash: Hex, final: boolean): ChainAnchor => ({
    txHash: randomHash(),
    compositeHash,
    previousTxHash: ZERO_TX_HASH,
    blockNumber: 9,
    blockHash: BLOCK_HASH,
    logIndex: 0,
    nonce: NONCE,
    raw: '0x02',
    maxFeePerGas: 2_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    final,
  })
  const compositeHashOf = async (id: string) =>
    (await query<{ composite_hash: Hex }>(db, sql`SELECT composite_hash FROM anchors WHERE id = ${id}`))[0]!
      .composite_hash
  const noFiller = async () => undefined

  /** Each transition with what sets up a row in `status`, makes the transition, and reads the row's status after. */
  const anchorCases: Record<keyof typeof ANCHOR_TRANSITIONS, (status: AnchorStatus) => Promise<string | undefined>> = {
    async mined(status) {
      const id = await insertAnchor(status)
      const txHash = await insertTransaction(id, 'broadcast')
      await markMined(
        db,
        [{ anchorId: id, txHash, blockNumber: 9, blockHash: BLOCK_HASH, logIndex: 0, confirmed: true }],
        CONTRACT,
      )
      return anchorStatus(id)
    },
    async reverted(status) {
      const id = await insertAnchor(status)
      const txHash = await insertTransaction(id, 'broadcast')
      await markMined(
        db,
        [{ anchorId: id, txHash, blockNumber: 9, blockHash: BLOCK_HASH, logIndex: null, confirmed: false }],
        CONTRACT,
      )
      return anchorStatus(id)
    },
    async nonceTaken(status) {
      const id = await insertAnchor(status)
      await insertTransaction(id, 'broadcast')
      const nonceBefore = await nextNonce()
      const reissued = await reissueAnchor(db, slot, id, async () => signed())
      // A settled anchor takes no nonce and gets no transaction.
      expect(reissued === undefined).toBe(status !== 'pending')
      expect(await nextNonce()).toBe(status === 'pending' ? nonceBefore + 1 : nonceBefore)
      return anchorStatus(id)
    },
    async feeBumped(status) {
      const id = await insertAnchor(status)
      await insertTransaction(id, 'broadcast')
      const replacement = signed()
      const stored = await addReplacement(db, slot, { anchorId: id, nonce: NONCE }, replacement)
      // Stored exactly when the anchor is pending; for a settled one nothing is.
      expect(stored).toBe(status === 'pending')
      expect(await transactionStatus(replacement.hash)).toBe(status === 'pending' ? 'broadcast' : undefined)
      return anchorStatus(id)
    },
    async displaced(status) {
      const id = await insertAnchor(status)
      await recordChainAnchor(db, slot, mined(randomHash(), true), noFiller, CONTRACT)
      return anchorStatus(id)
    },
    async adoptedFinal(status) {
      const id = await insertAnchor(status, { nonce: NONCE + 1 })
      await recordChainAnchor(db, slot, mined(await compositeHashOf(id), true), noFiller, CONTRACT)
      return anchorStatus(id)
    },
    async adoptedShallow(status) {
      const id = await insertAnchor(status, { nonce: NONCE + 1 })
      await recordChainAnchor(db, slot, mined(await compositeHashOf(id), false), noFiller, CONTRACT)
      return anchorStatus(id)
    },
  }

  const transactionCases: Record<
    keyof typeof RELAY_TRANSACTION_TRANSITIONS,
    (status: RelayTransactionStatus) => Promise<string | undefined>
  > = {
    async claimed(status) {
      const txHash = await insertTransaction(await insertAnchor('pending'), status)
      await claimForBroadcast(db, txHash)
      return transactionStatus(txHash)
    },
    async minedHash(status) {
      const id = await insertAnchor('pending')
      const txHash = await insertTransaction(id, status)
      await markMined(
        db,
        [{ anchorId: id, txHash, blockNumber: 9, blockHash: BLOCK_HASH, logIndex: 0, confirmed: true }],
        CONTRACT,
      )
      return transactionStatus(txHash)
    },
    async outmined(status) {
      const id = await insertAnchor('pending')
      const other = await insertTransaction(id, status)
      const txHash = await insertTransaction(id, 'broadcast')
      await markMined(
        db,
        [{ anchorId: id, txHash, blockNumber: 9, blockHash: BLOCK_HASH, logIndex: 0, confirmed: true }],
        CONTRACT,
      )
      return transactionStatus(other)
    },
    async fillerMined(status) {
      const txHash = await insertTransaction(null, status)
      await markFillerDone(db, txHash, 'mined')
      return transactionStatus(txHash)
    },
    async fillerOutrun(status) {
      const txHash = await insertTransaction(null, status)
      await markFillerDone(db, txHash, 'outrun')
      return transactionStatus(txHash)
    },
    async fillerPassed(status) {
      const txHash = await insertTransaction(null, status)
      await nonceAuthorityPastChain(db, slot, { latest: NONCE + 1, pending: NONCE + 2 })
      return transactionStatus(txHash)
    },
    async nonceTaken(status) {
      const id = await insertAnchor('pending')
      const txHash = await insertTransaction(id, status)
      await reissueAnchor(db, slot, id, async () => signed())
      return transactionStatus(txHash)
    },
    async superseded(status) {
      const id = await insertAnchor('pending', { nonce: NONCE + 1 })
      const txHash = await insertTransaction(id, status)
      await recordChainAnchor(db, slot, mined(await compositeHashOf(id), true), noFiller, CONTRACT)
      return transactionStatus(txHash)
    },
    async reorged(status) {
      const txHash = await insertTransaction(await insertAnchor('confirmed'), status)
      await reopenMined(db, txHash, CONTRACT)
      return transactionStatus(txHash)
    },
  }

  // Written out here, not read from the module under test: a change to the list must change this too.
  const anchorTransitions: Record<keyof typeof anchorCases, { from: AnchorStatus[]; to: AnchorStatus }> = {
    mined: { from: ['pending', 'confirmed', 'failed'], to: 'confirmed' },
    reverted: { from: ['pending', 'confirmed', 'failed'], to: 'failed' },
    nonceTaken: { from: ['pending'], to: 'pending' },
    feeBumped: { from: ['pending'], to: 'pending' },
    displaced: { from: ['pending', 'confirmed', 'failed'], to: 'pending' },
    adoptedFinal: { from: ['pending', 'failed'], to: 'confirmed' },
    adoptedShallow: { from: ['pending', 'failed'], to: 'pending' },
  }
  const transactionTransitions: Record<
    keyof typeof transactionCases,
    { from: RelayTransactionStatus[]; to: RelayTransactionStatus }
  > = {
    claimed: { from: ['signed'], to: 'broadcast' },
    minedHash: { from: ['signed', 'broadcast', 'mined', 'replaced'], to: 'mined' },
    outmined: { from: ['signed', 'broadcast', 'mined', 'replaced'], to: 'replaced' },
    fillerMined: { from: ['signed', 'broadcast'], to: 'mined' },
    fillerOutrun: { from: ['signed', 'broadcast'], to: 'failed' },
    fillerPassed: { from: ['signed'], to: 'failed' },
    nonceTaken: { from: ['signed', 'broadcast', 'replaced'], to: 'failed' },
    superseded: { from: ['signed', 'broadcast'], to: 'replaced' },
    reorged: { from: ['mined'], to: 'broadcast' },
  }

  it('lists the transitions written out here, and only those', () => {
    const shape = (list: Record<string, Transition<string>>) =>
      Object.fromEntries(Object.entries(list).map(([name, { from, to }]) => [name, { from: [...from], to }]))
    expect(shape(ANCHOR_TRANSITIONS)).toEqual(anchorTransitions)
    expect(shape(RELAY_TRANSACTION_TRANSITIONS)).toEqual(transactionTransitions)
  })

  describe('the events a marked transition records for the anchor’s owner, in its writer’s transaction', () => {
    async function ownedAnchor(status: AnchorStatus, options: { nonce?: number } = {}) {
      const id = await insertAnchor(status, options)
      const [owner] = await query<{ id: string }>(
        db,
        sql`INSERT INTO users (email) VALUES (${`owner-${randomHash()}@example.com`}) RETURNING id`,
      )
      await db.execute(sql`UPDATE anchors SET user_id = ${owner!.id} WHERE id = ${id}`)
      return id
    }
    const eventsOf = async (id: string) =>
      (
        await query<{ type: string }>(
          db,
          sql`SELECT e.type FROM events e JOIN anchors a ON a.id = ${id}
              WHERE e.user_id = a.user_id AND e.data->>'compositeHash' = a.composite_hash ORDER BY e.seq`,
        )
      ).map((row) => row.type)

    it('adoptedFinal: anchor.confirmed', async () => {
      const id = await ownedAnchor('pending', { nonce: NONCE + 1 })
      await recordChainAnchor(db, slot, mined(await compositeHashOf(id), true), noFiller, CONTRACT)
      expect(await eventsOf(id)).toEqual(['anchor.confirmed'])
    })

    it('displaced from confirmed: anchor.reorged', async () => {
      const confirmed = await ownedAnchor('confirmed')
      await recordChainAnchor(db, slot, mined(randomHash(), true), noFiller, CONTRACT)
      expect(await eventsOf(confirmed)).toEqual(['anchor.reorged'])
    })

    it('mined: anchor.confirmed once per block; reorged: anchor.reorged', async () => {
      const id = await ownedAnchor('pending')
      const txHash = await insertTransaction(id, 'broadcast')
      const mined = { anchorId: id, txHash, blockNumber: 9, blockHash: BLOCK_HASH, logIndex: 0, confirmed: true }
      await markMined(db, [mined], CONTRACT)
      await markMined(db, [mined], CONTRACT)
      await reopenMined(db, txHash, CONTRACT)
      expect(await eventsOf(id)).toEqual(['anchor.confirmed', 'anchor.reorged'])
    })
  })

  it('names the events of an anchor on the transitions that cause them', () => {
    const events = [...Object.entries(ANCHOR_TRANSITIONS), ...Object.entries(RELAY_TRANSACTION_TRANSITIONS)]
      .filter(([, transition]) => 'event' in transition)
      .map(([name, transition]) => `${name}: ${(transition as Transition<string>).event}`)
    expect(events.sort()).toEqual([
      'adoptedFinal: confirmed',
      'displaced: reorged',
      'mined: confirmed',
      'reorged: reorged',
      'reverted: failed',
    ])
  })

  for (const [name, transition] of Object.entries(anchorTransitions)) {
    for (const status of ANCHOR_STATUSES) {
      const after = transition.from.includes(status) ? transition.to : status
      it(`anchor ${name}: from ${status} ${transition.from.includes(status) ? `to ${after}` : 'stays'}`, async () => {
        expect(await anchorCases[name as keyof typeof anchorCases](status)).toBe(after)
      })
    }
  }

  for (const [name, transition] of Object.entries(transactionTransitions)) {
    for (const status of RELAY_TRANSACTION_STATUSES) {
      const after = transition.from.includes(status) ? transition.to : status
      it(`relay transaction ${name}: from ${status} ${transition.from.includes(status) ? `to ${after}` : 'stays'}`, async () => {
        expect(await transactionCases[name as keyof typeof transactionCases](status)).toBe(after)
      })
    }
  }
})
