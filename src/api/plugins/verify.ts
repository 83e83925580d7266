// Builds the verify service (result cache, receipt reader, link index, counters) once per app and decorates it as
// `app.verify`: the route only wires it to HTTP, and tests reach it the way the route does.
import fp from 'fastify-plugin'
import { Counter } from 'prom-client'
import type { Hash } from 'viem'
import { CHANNELS, RedisAnnouncements } from '../../redis-announcements.ts'
import { AnchorReader } from '../../verify/anchor-reader.ts'
import { ChainLinkIndex } from '../../verify/chain-link-index.ts'
import { IndexedChainCache } from '../../verify/indexed-chain-cache.ts'
import { RedisResultCache } from '../../verify/redis-result-cache.ts'
import { LruResultCache, type ResultCache } from '../../verify/result-cache.ts'
import { TieredResultCache } from '../../verify/tiered-result-cache.ts'
import { VerifyService } from '../../verify/verify-service.ts'
import type { AppInstance } from '../app-types.ts'

/** The channel of the anchors trigger (drizzle/0006_anchor_changes.sql). */
const ANCHORS_CHANGED = 'anchors_changed'

declare module 'fastify' {
  interface FastifyInstance {
    verify: VerifyService
  }
}

export const verifyPlugin = fp(
  async (app: AppInstance) => {
    const { config, chain, database, metrics, redis } = app.deps
    const settings = config.verify

    // Keyed by deployment as well, so chains and contracts sharing one Redis never mix their results; and by the
    // entry's shape (`a4`: outcomes, attestations, payloadErased), so entries cached by an older version are never
    // served as this one's.
    const deployment = `${settings.redisKeyPrefix}a4:${chain.chainId}:${chain.contractAddress.toLowerCase()}:`
    const local = new LruResultCache(settings.cacheMaxEntries)
    const cache: ResultCache = redis
      ? new TieredResultCache(local, new RedisResultCache(redis, deployment), {
          maxCopyMs: settings.cacheTtlSeconds * 1000,
        })
      : local

    // An embedded database announces every change to anchors; its lookups are remembered until then.
    let indexCache: IndexedChainCache | undefined
    if (database.kind === 'pglite') {
      const cache = new IndexedChainCache(settings.cacheMaxEntries)
      const stopListening = await database.pglite.listen(ANCHORS_CHANGED, () => cache.anchorsChanged())
      app.addHook('onClose', () => stopListening())
      indexCache = cache
    }

    // Erased ciphertexts (a deleted account) are forgotten by every instance at once, each its own cached copies.
    let erasures: RedisAnnouncements | undefined
    const counter = (name: string, help: string) => new Counter({ name, help, registers: [metrics.registry] })
    const service = new VerifyService({
      walk: {
        query: database.query,
        reader: new AnchorReader({
          client: chain.client,
          contract: chain.contractAddress,
          finalityDepth: settings.finalityDepth,
          finalCacheMaxEntries: settings.receiptCacheMaxEntries,
        }),
        links: new ChainLinkIndex(settings.linkCacheMaxHashes),
        maxDepth: settings.maxDepth,
        maxSuccessors: settings.maxSuccessors,
        indexCache,
      },
      cache,
      cacheTtlSeconds: settings.cacheTtlSeconds,
      notFoundTtlSeconds: settings.notFoundTtlSeconds,
      staleIfErrorSeconds: settings.staleIfErrorSeconds,
      counters: {
        hits: counter('verify_cache_hits_total', 'Verify requests answered from the result cache'),
        misses: counter('verify_cache_misses_total', 'Verify requests that needed the chain'),
        walks: counter('verify_walks_total', 'Chain walks run; concurrent misses of one hash share a walk'),
        staleServed: counter('verify_stale_served_total', 'Expired verify results served while the chain was down'),
      },
      log: app.log,
      ...(redis && { announceErased: async (txHash) => erasures?.announce(txHash) }),
    })
    if (redis) {
      erasures = new RedisAnnouncements(
        redis,
        CHANNELS.payloadErased,
        // In Redis too: the erasure may come from `npm run admin`, which knows no cache.
        (txHash) => void service.forget([txHash as Hash]),
        app.log,
      )
      await erasures.start()
      app.addHook('onClose', async () => erasures?.close())
    }
    app.decorate('verify', service)
  },
  { name: 'verify-service' },
)
