// A request body trickled in a byte at a time (issue 38, item 1): the service answers 408 once REQUEST_TIMEOUT_MS has
// passed without the whole request, and deploy/haproxy.cfg answers 408 once its `timeout http-request` has, and lets
// one source address hold at most 100 connections: a flood of such requests from one address (127.0.0.2 here) leaves
// every other client (127.0.0.1) served.
import { mkdtemp, rm } from 'node:fs/promises'
import type { AddressInfo } from 'node:net'
import { connect, type Socket } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type LoadBalancer, startLoadBalancer } from '../../bench/soak/load-balancer.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'

interface SlowRequest {
  socket: Socket
  /** Resolves with what the server answered (its status line), or 'closed' when it closed without an answer. */
  answer: Promise<string>
  /** The answer once it came. */
  settled?: string
}

/** A POST that announces 1,000 bytes of body and sends one, from `localAddress`; it never sends the rest. */
function slowRequest(url: string, localAddress = '127.0.0.1'): SlowRequest {
  const { hostname, port } = new URL(url)
  const socket = connect({ host: hostname, port: Number(port), localAddress })
  socket.on('error', () => {})
  socket.write(
    `POST /api/auth/magic-link HTTP/1.1\r\nHost: ${hostname}\r\nContent-Type: application/json\r\n` +
      'Content-Length: 1000\r\n\r\n{',
  )
  const answer = new Promise<string>((resolve) => {
    let received = ''
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('latin1')
    })
    socket.on('close', () => resolve(received.split('\r\n')[0] || 'closed'))
  })
  const request: SlowRequest = { socket, answer }
  void answer.then((settled) => {
    request.settled = settled
  })
  return request
}

describe('a request whose body never arrives', () => {
  let t: TestApp
  let url: string

  beforeAll(async () => {
    t = await createTestApp({ env: { REQUEST_TIMEOUT_MS: '1000' } })
    url = await t.app.listen({ host: '127.0.0.1', port: 0 })
  })
  afterAll(async () => t?.close())

  it('is answered 408 by the service once REQUEST_TIMEOUT_MS has passed, and closed', async () => {
    const started = performance.now()
    const slow = slowRequest(url)
    expect(await slow.answer).toBe('HTTP/1.1 408 Request Timeout')
    const elapsed = performance.now() - started
    expect(elapsed).toBeGreaterThanOrEqual(900)
    expect(elapsed).toBeLessThan(3_000)
  })
})

describe('deploy/haproxy.cfg under a slow-body flood from one address', () => {
  let t: TestApp
  let lb: LoadBalancer
  let dir: string
  const flood: SlowRequest[] = []

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'haproxy-slow-'))
    t = await createTestApp({ env: { TRUST_PROXY: '127.0.0.1' } })
    await t.app.listen({ host: '127.0.0.1', port: 0 })
    const instance = `127.0.0.1:${(t.app.server.address() as AddressInfo).port}`
    lb = await startLoadBalancer([instance, instance, instance], join(dir, 'haproxy.log'))
  })
  afterAll(async () => {
    for (const request of flood) request.socket.destroy()
    await lb?.stop()
    await t?.close()
    await rm(dir, { recursive: true, force: true })
  })

  it('holds 100 of its connections, refuses the rest, serves everyone else, and answers the held ones 408', async () => {
    for (let i = 0; i < 150; i++) flood.push(slowRequest(lb.url, '127.0.0.2'))
    // Those past the hundredth (in the order they reached HAProxy) are closed at once, without an answer.
    const settled = () => flood.filter((request) => request.settled !== undefined)
    await expect.poll(() => settled().length, { timeout: 5_000 }).toBe(50)
    await new Promise((resolve) => setTimeout(resolve, 500))
    expect(settled().map((request) => request.settled)).toEqual(Array(50).fill('closed'))
    // Another client is served meanwhile, at once.
    const started = performance.now()
    const health = await fetch(`${lb.url}/healthz`)
    expect(health.status).toBe(200)
    expect(performance.now() - started).toBeLessThan(1_000)
    // The held ones get 408 from HAProxy within its `timeout http-request` (10 s), not whenever the client likes.
    const held = await Promise.race([
      Promise.all(flood.filter((request) => request.settled === undefined).map((request) => request.answer)),
      new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 15_000)),
    ])
    expect(new Set(held as string[])).toEqual(new Set(['HTTP/1.1 408 Request Time-out']))
  }, 30_000)
})
