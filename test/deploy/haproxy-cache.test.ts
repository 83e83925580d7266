// The edge cache of the shipped deploy/haproxy.cfg (docs/operations.md, "The edge cache"): the real HAProxy in front
// of the real service, as the runbook sets them up (TRUST_PROXY = the balancer's address). An answer HAProxy gives from
// its cache carries an `Age` header, which the service never sends.
import { mkdtemp, rm } from 'node:fs/promises'
import { get, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hash } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoadBalancer, startLoadBalancer } from '../../bench/soak/load-balancer.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { rpc } from '../relay/relay-helpers.ts'
import { anchorChain, indexAnchors, randomHash } from '../verify/helpers/anchors.ts'

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

interface Answer {
  status: number
  headers: Record<string, string>
  body: Buffer
}

async function answer(url: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(url, { headers })
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body: Buffer.from(await response.arrayBuffer()),
  }
}

/** A GET with If-None-Match and nothing else. */
function conditional(url: string, etag: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    get(url, { headers: { 'if-none-match': etag } }, (response) => {
      response.resume()
      response.on('end', () => resolve(response))
    }).on('error', reject)
  })
}

describe('the edge cache of deploy/haproxy.cfg', () => {
  let testChain: TestChain
  let dir: string
  const stops: (() => Promise<void>)[] = []

  beforeAll(async () => {
    testChain = await startTestChain()
    dir = await mkdtemp(join(tmpdir(), 'haproxy-cache-'))
  })
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop()
    await testChain?.stop()
    await rm(dir, { recursive: true, force: true })
  })

  /** One instance (three times in HAProxy's server list, as the file names three) behind the shipped HAProxy. */
  async function fleet(env: Record<string, string> = {}): Promise<{ t: TestApp; lb: LoadBalancer; direct: string }> {
    const t = await createTestApp({
      env: { TRUST_PROXY: '127.0.0.1', RELAY_MONITOR_INTERVAL_MS: '0', ...env },
      testChain,
    })
    stops.push(() => t.close())
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const instance = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    const lb = await startLoadBalancer([instance, instance, instance], join(dir, `haproxy-${stops.length}.log`))
    stops.push(() => lb.stop())
    return { t, lb, direct: `http://${instance}` }
  }

  async function anchored(t: TestApp): Promise<Hash> {
    const [anchor] = await anchorChain(testChain, 1)
    await indexAnchors(t.database.handle.db, testChain, [anchor!])
    return anchor!.txHash
  }

  it('answers a cached verification while the instances are stopped, byte for byte as the service did', async () => {
    const { t, lb } = await fleet({ CORS_ORIGINS: 'https://verify.example' })
    const path = `/api/verify/${await anchored(t)}`
    const fromService = await answer(`${lb.url}${path}`)
    expect(fromService.status).toBe(200)
    expect(fromService.headers.age).toBeUndefined()

    await t.app.close()
    // Nothing answers what the cache does not hold.
    expect((await answer(`${lb.url}/api/verify/${randomHash()}`)).status).toBe(503)
    for (const origin of [{}, { origin: 'https://third-party.example' }] as Record<string, string>[]) {
      const { headers, ...fromCache } = await answer(`${lb.url}${path}`, origin)
      const { age, ...stored } = headers
      expect(age).toMatch(/^\d+$/)
      expect({ ...fromCache, headers: stored }).toEqual(fromService)
    }
    // Over node:http: fetch adds `Cache-Control: no-cache` to a request with If-None-Match, which HAProxy, rightly,
    // answers from an instance (a browser revalidating its own copy sends none).
    const notModified = await conditional(`${lb.url}${path}`, fromService.headers.etag!)
    expect(notModified.statusCode).toBe(304)
    expect(notModified.headers.etag).toBe(fromService.headers.etag)
    // Never for a request that carries credentials.
    expect((await answer(`${lb.url}${path}`, { authorization: 'Bearer x' })).status).toBe(503)
  })

  it('counts every miss against the per-IP limit; a hit reaches no instance and counts nothing', async () => {
    const { t, lb } = await fleet({ VERIFY_PER_IP_PER_MINUTE: '3' })
    const [cached, notYet] = [await anchored(t), await anchored(t)]
    const statuses = async (hashes: Hash[]) => {
      const answers = []
      for (const hash of hashes) answers.push(await answer(`${lb.url}/api/verify/${hash}`))
      return answers.map(({ status, headers }) => `${status}${headers.age === undefined ? '' : ' cached'}`)
    }
    // One miss, then hits: one request counted.
    expect(await statuses([cached, cached, cached, cached, cached])).toEqual([
      '200',
      '200 cached',
      '200 cached',
      '200 cached',
      '200 cached',
    ])
    // Misses (a not-found is never stored): the second and third count, the fourth is refused.
    expect(await statuses([randomHash(), randomHash(), randomHash()])).toEqual(['404', '404', '429'])
    // The client is over its limit: what the cache holds is still answered, a miss is refused (and not stored).
    expect(await statuses([cached, notYet, notYet])).toEqual(['200 cached', '429', '429'])
  })

  it('drops an anchor a reorg took off the chain once the service’s own lifetime of its walk ends', async () => {
    const { t, lb, direct } = await fleet({ VERIFY_CACHE_TTL_SECONDS: '4' })
    const txHash = await anchored(t)
    const path = `/api/verify/${txHash}`
    const walkedAt = Date.now()
    expect((await answer(`${direct}${path}`)).headers['cache-control']).toBe('public, max-age=4')
    await sleep(2_000)
    // HAProxy stores the answer with the two seconds the service has left of it, not a lifetime of its own (rounded:
    // one, when a loaded machine took over half a second more).
    const stored = await answer(`${lb.url}${path}`)
    expect(stored.headers['cache-control']).toMatch(/^public, max-age=[12]$/)

    await rpc(testChain.rpcUrl, 'anvil_reorg', [1, []])
    expect(await testChain.publicClient.getTransactionReceipt({ hash: txHash }).catch(() => null)).toBeNull()
    const meanwhile = await answer(`${lb.url}${path}`)
    expect(meanwhile.status).toBe(200)
    expect(meanwhile.headers.age).toBeDefined()

    // Past the walk's lifetime (4 s, rounding included). Had HAProxy kept it for a lifetime from its own copy (4 s
    // from 2 s after the walk), it would still answer 200 here.
    await sleep(walkedAt + 4_600 - Date.now())
    const after = await answer(`${lb.url}${path}`)
    expect(after.status).toBe(404)
    expect(JSON.parse(after.body.toString())).toMatchObject({ code: 'ANCHOR_NOT_FOUND' })
  })
})
