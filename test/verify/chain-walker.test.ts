import { sql } from 'drizzle-orm'
import { createTestClient, type Hash, http } from 'viem'
import { afterAll, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { ChainUnavailableError } from '../../src/chain/chain-errors.ts'
import { deployDocumentAnchors } from '../../src/chain/deploy-document-anchors.ts'
import { AnchorReader } from '../../src/verify/anchor-reader.ts'
import { ChainLinkIndex } from '../../src/verify/chain-link-index.ts'
import { type WalkDependencies, walkChain } from '../../src/verify/chain-walker.ts'
import { AnchorNotFoundError, ChainTooDeepError } from '../../src/verify/errors.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { type RpcCall, type RpcProxy, startRpcProxy } from '../helpers/chain/rpc-proxy.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import {
  anchorChain,
  chainFromLogs,
  indexAnchors,
  payloadOf,
  randomHash,
  sendPlainTransfer,
  type TestAnchor,
} from './helpers/anchors.ts'

describe('walkChain', () => {
  let testChain: TestChain
  let database: TestDatabase
  let proxy: RpcProxy
  let deps: WalkDependencies
  const chains = new Map<number, TestAnchor[]>()

  function dependencies(overrides: Partial<WalkDependencies> & { finalityDepth?: number } = {}): WalkDependencies {
    const client = createChainClient({ rpcUrls: [proxy.url], chainId: testChain.chain.id, pollingIntervalMs: 20 })
    return {
      query: database.handle.query,
      reader: new AnchorReader({
        client,
        contract: testChain.contract,
        finalityDepth: overrides.finalityDepth ?? 1_000_000,
        finalCacheMaxEntries: 1_000,
      }),
      links: new ChainLinkIndex(1_000),
      maxDepth: 256,
      maxSuccessors: 100,
      ...overrides,
    }
  }

  beforeAll(async () => {
    ;[testChain, database] = await Promise.all([startTestChain(), createTestDatabase()])
    proxy = await startRpcProxy(testChain.rpcUrl)
    for (const depth of [1, 2, 10, 50]) {
      const anchored = await anchorChain(testChain, depth)
      await indexAnchors(database.handle.db, testChain, anchored)
      chains.set(depth, anchored)
    }
  })
  afterAll(async () => {
    await proxy?.close()
    await database?.close()
    await testChain?.stop()
  })
  beforeEach(() => {
    deps = dependencies()
    proxy.reset()
  })

  describe('a chain the database knows', () => {
    it.each([1, 2, 10, 50])('returns depth %i first to latest, equal to the events viem reads', async (depth) => {
      const anchored = chains.get(depth)!
      const tip = anchored.at(-1)!
      const verified = await walkChain(deps, tip.txHash)

      const expected = await chainFromLogs(testChain, tip.txHash)
      expect(expected).toHaveLength(depth)
      expect(verified.chain).toEqual(expected)
      expect(verified.chain[0]!.previousTxHash).toBe(`0x${'0'.repeat(64)}`)
      expect(verified.chain.map((entry) => entry.txHash)).toEqual(anchored.map((anchor) => anchor.txHash))
      expect(verified.anchor).toEqual(expected.at(-1))
      expect(verified.anchor.signer).toBe(testChain.account(0).address.toLowerCase())
      expect(verified.encryptedPayload).toBe(payloadOf(tip))
      expect(verified.successors).toEqual([])
    })

    it('fetches every receipt of a depth-50 chain in one JSON-RPC round trip', async () => {
      const tip = chains.get(50)!.at(-1)!
      await walkChain(deps, tip.txHash)
      const trips = proxy.roundTrips()
      expect(trips).toHaveLength(1)
      const receipts = trips[0]!.filter((call) => call.method === 'eth_getTransactionReceipt')
      expect(receipts).toHaveLength(50)
    })

    it('lists the successors confirmed on chain, in chain order, and only those', async () => {
      const [root] = await anchorChain(testChain, 1)
      const first = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
      const second = await anchorChain(testChain, 2, { previousTxHash: root!.txHash })
      const elsewhere = await anchorChain(testChain, 1)
      await indexAnchors(database.handle.db, testChain, [root!, ...first, ...second])
      // Rows that claim to follow root but the chain disagrees: another anchor, and a hash never mined.
      await indexAnchors(database.handle.db, testChain, elsewhere, () => ({ previousTxHash: root!.txHash }))
      const ghost: TestAnchor = {
        txHash: randomHash(),
        compositeHash: randomHash(),
        previousTxHash: root!.txHash,
        nonce: 1e9,
      }
      await indexAnchors(database.handle.db, testChain, [ghost])

      const verified = await walkChain(deps, root!.txHash)
      const expected = [first[0]!, second[0]!].map((anchor) => anchor.txHash)
      expect(verified.successors.map((entry) => entry.txHash)).toEqual(expected)
      expect(verified.successors[1]).toEqual((await chainFromLogs(testChain, second[0]!.txHash)).at(-1))
      expect(proxy.roundTrips()).toHaveLength(1)
    })
  })

  describe('a chain verified before', () => {
    const receiptsOf = (trip: RpcCall[]) =>
      trip.filter((call) => call.method === 'eth_getTransactionReceipt').map((call) => call.params[0] as Hash)

    it('sends its receipts while the database lookup is still held, in one round trip', async () => {
      const anchored = chains.get(10)!
      const tip = anchored.at(-1)!
      const first = await walkChain(deps, tip.txHash)
      proxy.reset()

      // The lookup cannot answer while a transaction holds the table: PGlite runs one transaction at a time, and
      // PostgreSQL makes the lookup wait for the lock.
      let release!: () => void
      const released = new Promise<void>((resolve) => {
        release = resolve
      })
      // Also when the test fails on its timeout: the other tests need the table.
      onTestFinished(() => {
        proxy.intercept = undefined
        release()
      })
      let locked!: () => void
      const lockTaken = new Promise<void>((resolve) => {
        locked = resolve
      })
      let holding = false
      const held = database.handle.db.transaction(async (tx) => {
        await tx.execute(sql`LOCK TABLE anchors IN ACCESS EXCLUSIVE MODE`)
        holding = true
        locked()
        await released
      })
      await lockTaken
      const arrived = new Promise<{ receipts: Hash[]; whileHeld: boolean }>((resolve) => {
        proxy.intercept = (calls) => {
          resolve({ receipts: receiptsOf(calls), whileHeld: holding })
          return undefined
        }
      })
      const walk = walkChain(deps, tip.txHash)
      // A walk that waited for the lookup would never send this batch while the table is held (the test times out).
      const batch = await arrived
      expect(batch.whileHeld).toBe(true)
      expect(batch.receipts).toEqual(anchored.map((anchor) => anchor.txHash).reverse())
      holding = false
      release()
      await held
      expect(await walk).toEqual(first)
      expect(proxy.roundTrips()).toHaveLength(1)
    })

    it('fetches new successors in a second round trip, once, and lists them', async () => {
      const [root] = await anchorChain(testChain, 1)
      const first = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
      await indexAnchors(database.handle.db, testChain, [root!, ...first])
      await walkChain(deps, root!.txHash)

      const second = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
      await indexAnchors(database.handle.db, testChain, second)
      proxy.reset()
      const verified = await walkChain(deps, root!.txHash)
      expect(verified.successors).toEqual([
        (await chainFromLogs(testChain, first[0]!.txHash)).at(-1),
        (await chainFromLogs(testChain, second[0]!.txHash)).at(-1),
      ])
      const trips = proxy.roundTrips()
      expect(trips.map(receiptsOf)).toEqual([[root!.txHash, first[0]!.txHash], [second[0]!.txHash]])

      proxy.reset()
      expect(await walkChain(deps, root!.txHash)).toEqual(verified)
      expect(proxy.roundTrips()).toHaveLength(1)
    })

    it('fetches the links it no longer remembers in one more round trip, and returns the whole chain', async () => {
      const anchored = chains.get(10)!
      const tip = anchored.at(-1)!
      const expected = await walkChain(deps, tip.txHash)
      // Only the tip's link left in memory, as after an eviction.
      const forgetful = { ...deps, links: new ChainLinkIndex(10) }
      forgetful.links.rememberLink(tip.txHash, anchored[8]!.txHash)
      proxy.reset()
      expect(await walkChain(forgetful, tip.txHash)).toEqual(expected)
      expect(proxy.roundTrips().map(receiptsOf)).toEqual([
        [tip.txHash, anchored[8]!.txHash],
        anchored
          .slice(0, 8)
          .map((anchor) => anchor.txHash)
          .reverse(),
      ])
    })

    it('shows what the receipts say, not what a remembered link says', async () => {
      const anchored = chains.get(10)!
      const tip = anchored.at(-1)!
      const expected = await walkChain(deps, tip.txHash)
      const misled = { ...deps, links: new ChainLinkIndex(10) }
      misled.links.rememberLink(tip.txHash, randomHash())
      expect(await walkChain(misled, tip.txHash)).toEqual(expected)
    })

    it('never shows an anchor the chain no longer holds', async () => {
      const anvil = createTestClient({ mode: 'anvil', transport: http(testChain.rpcUrl) })
      const [root] = await anchorChain(testChain, 1)
      await indexAnchors(database.handle.db, testChain, [root!])
      const snapshot = await anvil.snapshot()
      const dropped = await anchorChain(testChain, 2, { previousTxHash: root!.txHash })
      await indexAnchors(database.handle.db, testChain, dropped)
      const tip = dropped[1]!
      expect((await walkChain(deps, tip.txHash)).chain).toHaveLength(3)
      expect((await walkChain(deps, root!.txHash)).successors.map((entry) => entry.txHash)).toEqual([
        dropped[0]!.txHash,
      ])

      // The two anchors leave the chain (a reorganisation); the database and the memory still name them.
      await anvil.revert({ id: snapshot })
      proxy.reset()
      await expect(walkChain(deps, tip.txHash)).rejects.toThrow(AnchorNotFoundError)
      expect(receiptsOf(proxy.roundTrips()[0]!)).toContain(tip.txHash)
      const rootAgain = await walkChain(deps, root!.txHash)
      expect(rootAgain.chain).toEqual(await chainFromLogs(testChain, root!.txHash))
      expect(rootAgain.successors).toEqual([])
    })
  })

  describe('a chain the database does not know', () => {
    it('walks it step by step and returns a null payload', async () => {
      const anchored = await anchorChain(testChain, 10)
      const tip = anchored.at(-1)!
      proxy.reset()
      const verified = await walkChain(deps, tip.txHash)
      expect(verified.chain).toEqual(await chainFromLogs(testChain, tip.txHash))
      expect(verified.encryptedPayload).toBeNull()
      expect(proxy.roundTrips()).toHaveLength(10)
    })

    it('follows the chain, not the database, where their links disagree', async () => {
      const real = await anchorChain(testChain, 4)
      const decoy = await anchorChain(testChain, 2)
      // The tip's row links to the decoy chain; the event links to real[2].
      await indexAnchors(database.handle.db, testChain, [...real.slice(0, 3), ...decoy])
      await indexAnchors(database.handle.db, testChain, [real[3]!], () => ({ previousTxHash: decoy[1]!.txHash }))
      const verified = await walkChain(deps, real[3]!.txHash)
      expect(verified.chain.map((entry) => entry.txHash)).toEqual(real.map((anchor) => anchor.txHash))
    })

    it('returns no payload when the row’s composite hash is not the one on chain', async () => {
      const [anchor] = await anchorChain(testChain, 1)
      await indexAnchors(database.handle.db, testChain, [anchor!], () => ({ compositeHash: randomHash() }))
      expect((await walkChain(deps, anchor!.txHash)).encryptedPayload).toBeNull()
    })
  })

  describe('what is not an anchor of this contract', () => {
    it('rejects the identical event emitted by another DocumentAnchors deployment', async () => {
      const lookAlike = await deployDocumentAnchors(testChain.walletClient(0), testChain.publicClient, {
        relayers: [testChain.account(0).address],
      })
      const [foreign] = await anchorChain(testChain, 1, { contract: lookAlike })
      const receipt = await testChain.publicClient.getTransactionReceipt({ hash: foreign!.txHash })
      expect(receipt.logs).toHaveLength(1)
      expect(receipt.logs[0]!.address).toBe(lookAlike.toLowerCase())
      await indexAnchors(database.handle.db, testChain, [foreign!])
      await expect(walkChain(deps, foreign!.txHash)).rejects.toThrow(AnchorNotFoundError)

      // Nor may it stand in as a link of one of ours.
      const [ours] = await anchorChain(testChain, 1, { previousTxHash: foreign!.txHash })
      await expect(walkChain(deps, ours!.txHash)).rejects.toThrow(/links to 0x[0-9a-f]{64}, which holds no anchor/)
    })

    it('rejects a plain ETH transfer and a hash that was never mined', async () => {
      await expect(walkChain(deps, await sendPlainTransfer(testChain))).rejects.toThrow(AnchorNotFoundError)
      await expect(walkChain(deps, randomHash())).rejects.toThrow(AnchorNotFoundError)
    })
  })

  describe('limits and failures', () => {
    it('walks a chain as deep as the maximum and refuses one anchor more', async () => {
      const anchored = chains.get(10)!
      await expect(walkChain({ ...deps, maxDepth: 10 }, anchored[9]!.txHash)).resolves.toBeDefined()
      await expect(walkChain({ ...deps, maxDepth: 9 }, anchored[9]!.txHash)).rejects.toThrow(ChainTooDeepError)
    })

    it('reports an unreachable chain as ChainUnavailableError', async () => {
      proxy.down = true
      try {
        await expect(walkChain(deps, chains.get(2)!.at(-1)!.txHash)).rejects.toThrow(ChainUnavailableError)
      } finally {
        proxy.down = false
      }
    })

    it('fetches a final receipt once, and receipts still within the finality depth every time', async () => {
      const anchored = await anchorChain(testChain, 3)
      await indexAnchors(database.handle.db, testChain, anchored)
      // Automine: one block per anchor. Final means `finalityDepth` blocks on top: the first two, not the last.
      const finalDeps = dependencies({ finalityDepth: 1 })
      await walkChain(finalDeps, anchored[2]!.txHash)
      proxy.reset()
      await walkChain(finalDeps, anchored[2]!.txHash)
      const fetched = proxy
        .roundTrips()
        .flat()
        .filter((call) => call.method === 'eth_getTransactionReceipt')
        .map((call) => call.params[0] as Hash)
      expect(fetched).toEqual([anchored[2]!.txHash])
    })
  })
})
