// The shipped deploy/haproxy.cfg in front of the service as the runbook sets it up (TRUST_PROXY = the balancer's
// address): a client rotating the X-Forwarded-For it sends is still counted under the address HAProxy saw, by every
// per-IP limit.
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoadBalancer, startLoadBalancer } from '../../bench/soak/load-balancer.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { randomHash } from '../relay/relay-helpers.ts'

describe('deploy/haproxy.cfg in front of the service', () => {
  let t: TestApp
  let lb: LoadBalancer
  let dir: string

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'haproxy-'))
    t = await createTestApp({
      env: {
        TRUST_PROXY: '127.0.0.1',
        VERIFY_PER_IP_PER_MINUTE: '5',
        CODE_REQUESTS_PER_IP_PER_HOUR: '3',
        CODE_VERIFICATIONS_PER_IP_PER_HOUR: '3',
      },
    })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const instance = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    lb = await startLoadBalancer([instance, instance, instance], join(dir, 'haproxy.log'))
  })
  afterAll(async () => {
    await lb?.stop()
    await t?.close()
    await rm(dir, { recursive: true, force: true })
  })

  /** `count` requests, each claiming another client address in every forwarding header a client can write. */
  async function forged(count: number, path: string, init: RequestInit = {}): Promise<number[]> {
    const statuses: number[] = []
    for (let i = 1; i <= count; i++) {
      const response = await fetch(`${lb.url}${path}`, {
        ...init,
        headers: {
          ...(init.headers as Record<string, string>),
          'x-forwarded-for': `203.0.113.${i}, 198.51.100.${i}`,
          forwarded: `for=192.0.2.${i}`,
          'x-real-ip': `192.0.2.${i}`,
        },
      })
      await response.arrayBuffer()
      statuses.push(response.status)
    }
    return statuses
  }

  it('counts verifications under the address HAProxy saw, whatever X-Forwarded-For the client sends', async () => {
    const statuses = await forged(8, `/api/verify/${randomHash()}`)
    expect(statuses).toEqual([404, 404, 404, 404, 404, 429, 429, 429])
  })

  it('tells clients its own idle limit for keep-alive, not the instances’ 72 s, on answers of its own too', async () => {
    // A client told 72 s would reuse a connection HAProxy closed after its own idle limit, and lose that request.
    const { port } = t.app.server.address() as AddressInfo
    const direct = await fetch(`http://127.0.0.1:${port}/healthz`)
    expect(direct.headers.get('keep-alive')).toBe('timeout=72')
    for (const path of ['/healthz', `/api/verify/${'0x'.padEnd(66, '1')}`, '/%']) {
      const response = await fetch(`${lb.url}${path}`)
      await response.arrayBuffer()
      expect({ path, keepAlive: response.headers.get('keep-alive') }).toEqual({ path, keepAlive: 'timeout=10' })
    }
  })

  it('counts sign-in code requests and checks the same way', async () => {
    const json = { method: 'POST', headers: { 'content-type': 'application/json' } }
    const requests = await forged(5, '/api/auth/magic-link', {
      ...json,
      body: JSON.stringify({ email: 'someone@example.com' }),
    })
    expect(requests.slice(3)).toEqual([429, 429])
    const checks = await forged(5, '/api/auth/magic-link/verify', {
      ...json,
      body: JSON.stringify({ email: 'someone@example.com', code: '000000' }),
    })
    expect(checks).toEqual([401, 401, 401, 429, 429])
  })
})
