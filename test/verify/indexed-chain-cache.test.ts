// The verify index remembered for an embedded database (src/verify/indexed-chain-cache.ts): answers are reused until
// the anchors trigger (drizzle/0006_anchor_changes.sql) announces a change, and one read across a change is never kept.
import { eq } from 'drizzle-orm'
import type { Hash } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createChainClient } from '../../src/chain/chain-client.ts'
import { type DatabaseHandle, openDatabase } from '../../src/db/database.ts'
import { migrateDatabase } from '../../src/db/migrate.ts'
import { anchors } from '../../src/db/schema.ts'
import type { IndexedChain } from '../../src/verify/anchor-index.ts'
import { AnchorReader } from '../../src/verify/anchor-reader.ts'
import { ChainLinkIndex } from '../../src/verify/chain-link-index.ts'
import { type WalkDependencies, walkChain } from '../../src/verify/chain-walker.ts'
import { IndexedChainCache } from '../../src/verify/indexed-chain-cache.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { anchorChain, indexAnchors, payloadOf, randomHash } from './helpers/anchors.ts'

const emptyIndex = (): IndexedChain => ({
  chain: [],
  encryptedPayload: undefined,
  payloadErased: false,
  successors: [],
  attestations: new Map(),
})

describe('IndexedChainCache', () => {
  it('remembers what it read until anchors change', async () => {
    const cache = new IndexedChainCache(10)
    const hash = randomHash()
    const indexed = emptyIndex()
    expect(await cache.read(hash, async () => indexed)).toBe(indexed)
    expect(cache.get(hash)).toBe(indexed)
    cache.anchorsChanged()
    expect(cache.get(hash)).toBeUndefined()
  })

  it('never keeps an answer read across a change', async () => {
    const cache = new IndexedChainCache(10)
    const hash = randomHash()
    let finish: (indexed: IndexedChain) => void = () => {}
    const reading = cache.read(hash, () => new Promise((resolve) => (finish = resolve)))
    cache.anchorsChanged()
    finish(emptyIndex())
    await reading
    expect(cache.get(hash)).toBeUndefined()
  })
})

describe('the verify index on PGlite', () => {
  let testChain: TestChain
  let database: DatabaseHandle
  let t: TestApp

  beforeAll(async () => {
    testChain = await startTestChain()
    database = await openDatabase({})
    await migrateDatabase(database)
    // The result cache off: every verification walks, so each one shows what the index said.
    t = await createTestApp({ testChain, env: { VERIFY_CACHE_TTL_SECONDS: '0', VERIFY_FINALITY_DEPTH: '1000000' } })
  })
  afterAll(async () => {
    await t?.close()
    await database?.close()
    await testChain?.stop()
  })

  it('is read once while anchors do not change, and again after any change', async () => {
    if (database.kind !== 'pglite') throw new Error('openDatabase({}) opens PGlite')
    const cache = new IndexedChainCache(100)
    const stopListening = await database.pglite.listen('anchors_changed', () => cache.anchorsChanged())
    try {
      let lookups = 0
      const deps: WalkDependencies = {
        query: (text) => {
          lookups += 1
          return database.query(text)
        },
        reader: new AnchorReader({
          client: createChainClient({
            rpcUrls: [testChain.rpcUrl],
            chainId: testChain.chain.id,
            pollingIntervalMs: 20,
          }),
          contract: testChain.contract,
          finalityDepth: 1_000_000,
          finalCacheMaxEntries: 100,
        }),
        links: new ChainLinkIndex(100),
        maxDepth: 16,
        maxSuccessors: 16,
        indexCache: cache,
      }
      const [root] = await anchorChain(testChain, 1)
      await indexAnchors(database.db, testChain, [root!])
      for (let i = 0; i < 3; i++) await walkChain(deps, root!.txHash)
      expect(lookups).toBe(1)

      const [next] = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
      await indexAnchors(database.db, testChain, [next!])
      expect((await walkChain(deps, root!.txHash)).successors.map((entry) => entry.txHash)).toEqual([next!.txHash])
      expect(lookups).toBe(2)
      await database.db.update(anchors).set({ status: 'failed' }).where(eq(anchors.txHash, next!.txHash))
      expect((await walkChain(deps, root!.txHash)).successors).toEqual([])
      await database.db.delete(anchors).where(eq(anchors.txHash, root!.txHash))
      expect((await walkChain(deps, root!.txHash)).encryptedPayload).toBeNull()
      expect(lookups).toBe(4)
    } finally {
      await stopListening()
    }
  })

  it('answers every verification with what the database holds now', async () => {
    const verify = async (hash: Hash) => (await t.app.inject(`/api/verify/${hash}`)).json()
    const [root] = await anchorChain(testChain, 1)
    // On chain but not yet in the database: no ciphertext; then the row, then a successor, then the successor failed.
    expect((await verify(root!.txHash)).encryptedPayload).toBeNull()
    await indexAnchors(t.database.handle.db, testChain, [root!])
    expect((await verify(root!.txHash)).encryptedPayload).toBe(payloadOf(root!))
    const [next] = await anchorChain(testChain, 1, { previousTxHash: root!.txHash })
    await indexAnchors(t.database.handle.db, testChain, [next!])
    expect((await verify(root!.txHash)).successors.map((entry: { txHash: Hash }) => entry.txHash)).toEqual([
      next!.txHash,
    ])
    await t.database.handle.db.update(anchors).set({ status: 'failed' }).where(eq(anchors.txHash, next!.txHash))
    expect((await verify(root!.txHash)).successors).toEqual([])
  })
})
