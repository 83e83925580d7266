// The reconciliation's harder cases (a review of issue 30 found each): an adopted reservation leaves no nonce empty, a
// follow-up reads what was still in the pool however far the database has moved on, a reconciliation that fails keeps
// the monitor from re-signing what the chain may hold already, an unsent filler on a nonce a node's pool holds is
// never handed out again, and a relay that reserves the composite hash while the reconciliation records it is adopted.
import { sql } from 'drizzle-orm'
import pg from 'pg'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { quotaPeriod } from '../../src/db/schema.ts'
import { type ChainAnchor, recordChainAnchor } from '../../src/relayer/outbox/reconciled-anchors.ts'
import { insertRelayTransaction } from '../../src/relayer/outbox/relay-transactions.ts'
import { reserveAnchors } from '../../src/relayer/outbox/reservations.ts'
import { slotOf } from '../../src/relayer/relay-context.ts'
import { signFiller } from '../../src/relayer/signing.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { testPostgresUrl } from '../helpers/db/database.ts'
import {
  anchorRow,
  forgetAnchors,
  newBody,
  nextNonceRow,
  poolMined,
  postRelay,
  query,
  type RelayBody,
  relayMined,
  rpc,
  timesOnChain,
} from './relay-helpers.ts'

const REORG_WATCH_BLOCKS = 4

describe('reconciliation with the chain, the harder cases', () => {
  let chain: TestChain
  let proxy: RpcProxy
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    chain = await startTestChain()
    proxy = await startRpcProxy(chain.rpcUrl)
    t = await createTestApp({
      testChain: chain,
      env: {
        RELAY_MONITOR_INTERVAL_MS: '0',
        RELAY_WAIT_MS: '300',
        RELAY_REORG_WATCH_BLOCKS: String(REORG_WATCH_BLOCKS),
        // An unsent filler is sent once anchors have waited behind it this long.
        RELAY_STUCK_AFTER_MS: '200',
      },
      // The app reaches the node through a proxy that can answer as a provider refusing a log query.
      chainContext: () => ({
        client: createChainClient({ rpcUrls: [proxy.url], chainId: chain.chain.id, pollingIntervalMs: 20 }),
      }),
    })
    user = await signInTestUser(t)
  })
  afterAll(async () => {
    await t?.close()
    await proxy?.close()
    await chain?.stop()
  })

  const db = () => t.database.handle.db
  const relayer = () => chain.account(0)
  const slot = () => slotOf(t.app.relayer, relayer().address)
  const relayed = (body: RelayBody) => relayMined(t.app, user.headers, body)
  const nextNonce = () => nextNonceRow(db())
  const chainNonce = (blockTag: 'latest' | 'pending' = 'latest') =>
    chain.publicClient.getTransactionCount({ address: relayer().address, blockTag })
  const anchorOf = (compositeHash: string) => anchorRow(db(), compositeHash)
  const onChain = (compositeHash: string) => timesOnChain(chain, compositeHash)
  const forget = (bodies: RelayBody[], nonceBefore: number) => forgetAnchors(db(), bodies, nonceBefore)
  /** The relayer key anchoring by itself, as a transaction of the service the database then forgot. */
  const anchorOutsideTheService = (body: RelayBody, options: { nonce: number; maxFeePerGas?: bigint }) =>
    chain.walletClient(0).writeContract({
      address: chain.contract,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [body.compositeHash as Hex, body.previousTxHash as Hex],
      nonce: options.nonce,
      ...(options.maxFeePerGas !== undefined && {
        maxFeePerGas: options.maxFeePerGas,
        maxPriorityFeePerGas: options.maxFeePerGas / 2n,
      }),
    })
  const withoutAutomine = async (work: () => Promise<void>) => {
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false])
    try {
      await work()
    } finally {
      await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
    }
  }

  it('keeps the nonce a re-attached reservation held with a filler, so the next relays are mined', async () => {
    await relayed(newBody())
    const nonceBefore = await nextNonce()
    const [first, second] = [newBody(), newBody()]
    await relayed(first)
    const secondHash = await relayed(second)
    await forget([first, second], nonceBefore)
    // The client repeats the second relay on the forgetful database: its reservation takes the first's nonce.
    const [reserved] = await reserveAnchors(
      db(),
      slot(),
      [{ ...second, userId: user.id, period: quotaPeriod().period }],
      { plans: { free: 1_000 }, defaultPlan: 'free' },
    )
    expect(reserved).toMatchObject({ kind: 'reserved', nonce: nonceBefore })

    // The first's event moves the reservation to a fresh nonce; the second's re-attaches it to its mined transaction.
    expect(await t.app.relayer.reconciliation.run()).toMatchObject({ recovered: 1, adopted: 1 })
    expect(await anchorOf(second.compositeHash)).toMatchObject({ tx_hash: secondHash, status: 'confirmed' })
    expect(Number((await anchorOf(second.compositeHash))!.nonce)).toBe(nonceBefore + 1)
    const [filler] = await query<{ nonce: number }>(
      db(),
      sql`SELECT nonce FROM relay_transactions WHERE anchor_id IS NULL AND status = 'signed'`,
    )
    expect(Number(filler?.nonce)).toBe(nonceBefore + 2)

    // The next relay takes the kept nonce and is mined at once: nothing waits behind an empty nonce.
    const fresh = newBody()
    await relayed(fresh)
    expect(Number((await anchorOf(fresh.compositeHash))!.nonce)).toBe(nonceBefore + 2)
    expect(await chainNonce()).toBe(nonceBefore + 3)
    for (const body of [first, second, fresh]) expect(await onChain(body.compositeHash)).toBe(1)
  })

  it('reads, once they are mined, what a run left in the pool, however far the known anchors moved on', async () => {
    const forgotten = newBody()
    let forgottenHash: Hex | undefined
    await withoutAutomine(async () => {
      forgottenHash = await anchorOutsideTheService(forgotten, { nonce: await chainNonce('pending') })
      t.app.relayer.reconciliation.require('a test')
      const first = await t.app.relayer.reconciliation.run()
      expect(first.unmined).toEqual([{ relayer: slot().relayer, until: (await chainNonce()) + 1 }])
      await rpc(chain.rpcUrl, 'evm_mine')
      // Blocks past the reorg watch, then an anchor the database knows: its last known block is far beyond.
      await rpc(chain.rpcUrl, 'anvil_mine', [`0x${(REORG_WATCH_BLOCKS * 3).toString(16)}`])
    })
    await relayed(newBody())

    // The monitor sees the key's count reach what the pool held and follows up.
    await t.app.relayMonitor.tick()
    expect(await anchorOf(forgotten.compositeHash)).toMatchObject({ tx_hash: forgottenHash, encrypted_payload: null })
    expect(await onChain(forgotten.compositeHash)).toBe(1)
  })

  it('re-signs no anchor whose nonce a forgotten transaction used while the reconciliation fails', async () => {
    const body = newBody()
    let bumped: Hex | undefined
    await withoutAutomine(async () => {
      const nonce = await nextNonce()
      const pending = await postRelay(t.app, user.headers, body)
      expect(pending.statusCode).toBe(202)
      // A fee bump of the same call the database never recorded (its row lost with a failover) takes the nonce.
      const sent = await chain.publicClient.getTransaction({ hash: pending.json().txHash })
      bumped = await anchorOutsideTheService(body, { nonce, maxFeePerGas: sent.maxFeePerGas! * 2n })
      await rpc(chain.rpcUrl, 'evm_mine')
    })
    expect(await onChain(body.compositeHash)).toBe(1)

    // The monitor sees the nonce used by a transaction it does not hold and asks for a reconciliation, which fails:
    // a provider refuses the log query. However many passes, the anchor is not signed again.
    proxy.intercept = (calls) =>
      calls.some((call) => call.method === 'eth_getLogs')
        ? { rpcError: { code: -32005, message: 'query returned more than 10000 results' } }
        : undefined
    try {
      for (let pass = 0; pass < 3; pass++) await t.app.relayMonitor.tick()
      expect(t.app.relayer.reconciliation.due).toBe(true)
    } finally {
      proxy.intercept = undefined
    }
    await poolMined(chain)
    expect(await onChain(body.compositeHash)).toBe(1)

    // Once it runs, the anchor takes the mined bump: confirmed, on chain once.
    await t.app.relayMonitor.tick()
    expect(await anchorOf(body.compositeHash)).toMatchObject({ tx_hash: bumped, status: 'confirmed' })
    await t.app.relayMonitor.tick()
    await poolMined(chain)
    expect(await onChain(body.compositeHash)).toBe(1)
  })

  it('fills the nonce of a forgotten transaction the node dropped, so the relays behind it are mined', async () => {
    const forgotten = newBody()
    const behind = newBody()
    let gap = 0
    await withoutAutomine(async () => {
      gap = await chainNonce('pending')
      const hash = await anchorOutsideTheService(forgotten, { nonce: gap })
      t.app.relayer.reconciliation.require('a test')
      expect((await t.app.relayer.reconciliation.run()).unmined).toHaveLength(1)
      expect(await nextNonce()).toBe(gap + 1)
      // The node drops it: nothing holds the nonce any more, and the next relay waits behind it.
      await rpc(chain.rpcUrl, 'anvil_dropTransaction', [hash])
    })
    expect((await postRelay(t.app, user.headers, behind)).statusCode).toBe(202)
    expect(Number((await anchorOf(behind.compositeHash))!.nonce)).toBe(gap + 1)

    // One pass sees the key's next nonce held by nothing, the next fills it, a later one sends the filler once the
    // relay has waited behind it (RELAY_STUCK_AFTER_MS), and the one after that finds the relay mined.
    await expect
      .poll(
        async () => {
          await t.app.relayMonitor.tick()
          await poolMined(chain)
          return (await anchorOf(behind.compositeHash))?.status
        },
        { interval: 250, timeout: 10_000 },
      )
      .toBe('confirmed')
    expect(await onChain(forgotten.compositeHash)).toBe(0)
    expect(await chainNonce()).toBe(gap + 2)
  })

  it('retires an unsent filler on a nonce a transaction in the pool holds, and hands out the next one', async () => {
    await withoutAutomine(async () => {
      const nonce = await nextNonce()
      // A filler the database kept for `nonce` (a withdrawn relay's, say) ...
      await db().execute(sql`UPDATE relayer_nonces SET next_nonce = ${nonce + 1}`)
      const fees = await t.app.relayer.fees.current()
      await insertRelayTransaction(db(), slot(), {
        anchorId: null,
        nonce,
        signed: await signFiller(relayer(), chain.chain.id, nonce, fees),
      })
      // ... while a node's pool holds the key's transaction at that nonce, one the database forgot.
      await anchorOutsideTheService(newBody(), { nonce })
      t.app.relayer.reconciliation.require('a test')
      await t.app.relayer.reconciliation.run()
      const [filler] = await query<{ status: string }>(
        db(),
        sql`SELECT status FROM relay_transactions WHERE anchor_id IS NULL AND nonce = ${nonce}`,
      )
      expect(filler?.status).toBe('failed')
      const [next] = await reserveAnchors(
        db(),
        slot(),
        [{ ...newBody(), userId: user.id, period: quotaPeriod().period }],
        { plans: { free: 1_000 }, defaultPlan: 'free' },
      )
      expect(next).toMatchObject({ kind: 'reserved', nonce: nonce + 1 })
      // The reservation is signed and sent by the monitor once its request is taken for dead; mined after the pool's.
      await db().execute(sql`UPDATE anchors SET created_at = now() - interval '1 minute' WHERE nonce = ${nonce + 1}`)
    })
    await rpc(chain.rpcUrl, 'evm_mine')
    await t.app.relayMonitor.tick()
    await poolMined(chain)
    await t.app.relayMonitor.tick()
    const [reservation] = await query<{ status: string }>(
      db(),
      sql`SELECT status FROM anchors WHERE nonce = ${(await nextNonce()) - 1}`,
    )
    expect(reservation?.status).toBe('confirmed')
  })

  // PostgreSQL only: the relay's reservation is made on another connection while the record's transaction waits.
  it.runIf(testPostgresUrl !== undefined)(
    'adopts the reservation a relay makes between the record’s look and its insert, and anchors nothing twice',
    async () => {
      const nonceBefore = await nextNonce()
      const body = newBody()
      const txHash = await relayed(body)
      await forget([body], nonceBefore)
      // What the reconciliation does before it records: the nonce row raised to the chain's count.
      await db().execute(sql`UPDATE relayer_nonces SET next_nonce = ${await chainNonce('pending')}`)
      const transaction = await chain.publicClient.getTransaction({ hash: txHash })
      const receipt = await chain.publicClient.getTransactionReceipt({ hash: txHash })
      const found: ChainAnchor = {
        txHash,
        compositeHash: body.compositeHash as Hex,
        previousTxHash: body.previousTxHash as Hex,
        blockNumber: Number(receipt.blockNumber),
        blockHash: receipt.blockHash,
        logIndex: receipt.logs[0]!.logIndex,
        nonce: nonceBefore,
        raw: await rpc<Hex>(chain.rpcUrl, 'eth_getRawTransactionByHash', [txHash]),
        maxFeePerGas: transaction.maxFeePerGas!,
        maxPriorityFeePerGas: transaction.maxPriorityFeePerGas!,
        final: true,
      }
      const fees = await t.app.relayer.fees.current()
      // A filler the database kept on the mined nonce, which the record retires: locked here, it holds the record
      // after its look for the composite hash and before its insert.
      await insertRelayTransaction(db(), slot(), {
        anchorId: null,
        nonce: nonceBefore,
        signed: await signFiller(relayer(), chain.chain.id, nonceBefore, fees),
      })
      const blocker = new pg.Client({ connectionString: t.database.url })
      await blocker.connect()
      try {
        await blocker.query('BEGIN')
        await blocker.query('SELECT 1 FROM relay_transactions WHERE anchor_id IS NULL AND nonce = $1 FOR UPDATE', [
          nonceBefore,
        ])
        const recorded = recordChainAnchor(
          db(),
          slot(),
          found,
          (_relayer, nonce) => signFiller(relayer(), chain.chain.id, nonce, fees),
          t.app.relayer.chain.contractAddress,
        )
        await expect
          .poll(
            async () =>
              (
                await query(
                  db(),
                  sql`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`,
                )
              ).length,
          )
          .toBe(1)
        // The client's repeat reserves the composite hash meanwhile, on a fresh nonce.
        const [reserved] = await reserveAnchors(
          db(),
          slot(),
          [{ ...body, userId: user.id, period: quotaPeriod().period }],
          { plans: { free: 1_000 }, defaultPlan: 'free' },
        )
        expect(reserved).toMatchObject({ kind: 'reserved', nonce: nonceBefore + 1 })
        await blocker.query('COMMIT')
        expect(await recorded).toMatchObject({ kind: 'adopted' })
      } finally {
        await blocker.end()
      }
      expect(await anchorOf(body.compositeHash)).toMatchObject({ tx_hash: txHash, status: 'confirmed' })
      // The reservation signed by no one: the next relay takes its kept nonce and the hash is on chain once.
      await relayed(newBody())
      await t.app.relayMonitor.tick()
      await poolMined(chain)
      expect(await onChain(body.compositeHash)).toBe(1)
      expect(await chainNonce()).toBe(nonceBefore + 2)
    },
  )
})
