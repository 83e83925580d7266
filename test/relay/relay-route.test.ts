import { ZERO_TX_HASH } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { count, newBody, postRelay, query, randomHash, randomPayload } from './relay-helpers.ts'

describe('POST /api/relay', () => {
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('returns 201 with the mined transaction and stores the anchor', async () => {
    const body = newBody()
    body.compositeHash = body.compositeHash.toUpperCase().replace('0X', '0x')
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(201)
    const json = response.json()
    expect(json).toMatchObject({
      compositeHash: body.compositeHash.toLowerCase(),
      previousTxHash: ZERO_TX_HASH,
      status: 'confirmed',
    })
    expect(json.txHash).toMatch(/^0x[0-9a-f]{64}$/)
    const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: json.txHash })
    expect(Number(receipt.blockNumber)).toBe(json.blockNumber)
    expect(receipt.to?.toLowerCase()).toBe(t.chain.contractAddress.toLowerCase())
    expect(receipt.gasUsed).toBeLessThan(40_000n)
    const events = await t.testChain.publicClient.getContractEvents({
      abi: documentAnchorsAbi,
      address: t.chain.contractAddress,
      eventName: 'DocumentAnchored',
      fromBlock: receipt.blockNumber,
      toBlock: receipt.blockNumber,
    })
    expect(events[0]?.args.compositeHash).toBe(body.compositeHash.toLowerCase())
    const [row] = await query(t.database.handle.db, sql`SELECT * FROM anchors WHERE tx_hash = ${json.txHash}`)
    expect(row).toMatchObject({ encrypted_payload: body.encryptedPayload, status: 'confirmed', user_id: user.id })
  })

  it('answers a repeated request with 200 and the same txHash, without a second transaction', async () => {
    const body = newBody()
    const first = await postRelay(t.app, user.headers, body)
    const txBefore = await count(t.database.handle.db, 'relay_transactions')
    const again = await postRelay(t.app, user.headers, body)
    expect(first.statusCode).toBe(201)
    expect(again.statusCode).toBe(200)
    expect(again.json()).toEqual(first.json())
    expect(await count(t.database.handle.db, 'relay_transactions')).toBe(txBefore)
  })

  it('sends one transaction when the same request races with itself', async () => {
    const body = newBody()
    const before = await count(t.database.handle.db, 'relay_transactions')
    const responses = await Promise.all(Array.from({ length: 5 }, () => postRelay(t.app, user.headers, body)))
    const hashes = new Set(responses.map((r) => r.json().txHash))
    expect(hashes.size).toBe(1)
    expect(responses.map((r) => r.statusCode).sort()).toEqual([200, 200, 200, 200, 201])
    expect(await count(t.database.handle.db, 'relay_transactions')).toBe(before + 1)
  })

  it('returns 409 for different data or another user on an anchored composite hash', async () => {
    const body = newBody()
    expect((await postRelay(t.app, user.headers, body)).statusCode).toBe(201)
    const other = await signInTestUser(t)
    const changed = [
      { ...body, encryptedPayload: randomPayload() },
      { ...body, previousTxHash: (await postRelay(t.app, user.headers, newBody())).json().txHash },
    ]
    for (const variant of changed) {
      const response = await postRelay(t.app, user.headers, variant)
      expect(response.statusCode).toBe(409)
      expect(response.json().code).toBe('ANCHOR_CONFLICT')
    }
    const stolen = await postRelay(t.app, other.headers, body)
    expect(stolen.statusCode).toBe(409)
  })

  it('accepts an existing anchor as previousTxHash, from the database or from the chain', async () => {
    const first = (await postRelay(t.app, user.headers, newBody())).json()
    const second = await postRelay(t.app, user.headers, newBody(first.txHash.toUpperCase().replace('0X', '0x')))
    expect(second.statusCode).toBe(201)
    expect(second.json().previousTxHash).toBe(first.txHash)
    // Anchored on chain by the relayer key directly: unknown to the database, found through the receipt.
    const wallet = t.testChain.walletClient(0)
    const hash = await wallet.writeContract({
      address: t.chain.contractAddress,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [randomHash(), ZERO_TX_HASH as `0x${string}`],
    })
    await t.testChain.publicClient.waitForTransactionReceipt({ hash })
    // The key was used outside the service: the next relay must notice and still succeed.
    const third = await postRelay(t.app, user.headers, newBody(hash))
    expect(third.statusCode).toBe(201)
  })

  it('returns 422 PREVIOUS_NOT_FOUND for an unknown previous hash or a transaction of another contract', async () => {
    const plain = await t.testChain.walletClient(1).sendTransaction({ to: t.testChain.account(2).address, value: 1n })
    await t.testChain.publicClient.waitForTransactionReceipt({ hash: plain })
    const anchorsBefore = await count(t.database.handle.db, 'anchors')
    for (const previous of [randomHash(), plain]) {
      const response = await postRelay(t.app, user.headers, newBody(previous))
      expect(response.statusCode).toBe(422)
      expect(response.json().code).toBe('PREVIOUS_NOT_FOUND')
    }
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchorsBefore)
  })

  it('rejects bad input of every kind with 400 and writes nothing', async () => {
    const good = newBody()
    const padded = `${randomPayload(40)}`
    const cases: [string, unknown][] = [
      ['missing compositeHash', { previousTxHash: ZERO_TX_HASH, encryptedPayload: good.encryptedPayload }],
      ['missing previousTxHash', { compositeHash: good.compositeHash, encryptedPayload: good.encryptedPayload }],
      ['missing encryptedPayload', { compositeHash: good.compositeHash, previousTxHash: ZERO_TX_HASH }],
      ['short hash', { ...good, compositeHash: good.compositeHash.slice(0, 65) }],
      ['long hash', { ...good, compositeHash: `${good.compositeHash}00` }],
      ['non-hex hash', { ...good, compositeHash: `0x${'g'.repeat(64)}` }],
      ['no 0x', { ...good, previousTxHash: '0'.repeat(64) }],
      ['hash as number', { ...good, compositeHash: 12 }],
      ['standard base64', { ...good, encryptedPayload: `${padded.slice(0, -2)}+/` }],
      ['base64url with a space', { ...good, encryptedPayload: `${padded.slice(0, 10)} ${padded.slice(10)}` }],
      ['too few bytes', { ...good, encryptedPayload: randomPayload(28) }],
      ['too long', { ...good, encryptedPayload: 'A'.repeat(2052) }],
      ['empty payload', { ...good, encryptedPayload: '' }],
      ['array body', [good]],
    ]
    for (const [name, body] of cases) {
      const response = await postRelay(t.app, user.headers, body)
      expect(response.statusCode, name).toBe(400)
      expect(response.json().code, name).toBe('VALIDATION_FAILED')
    }
    const anchors = await count(t.database.handle.db, 'anchors')
    const huge = await t.app.inject({
      method: 'POST',
      url: '/api/relay',
      headers: { ...user.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ ...good, encryptedPayload: 'A'.repeat(70_000) }),
    })
    expect(huge.statusCode).toBe(413)
    const noJwt = await postRelay(t.app, {}, good)
    expect(noJwt.statusCode).toBe(401)
    const badJwt = await postRelay(t.app, { authorization: `${user.headers.authorization}x` }, good)
    expect(badJwt.statusCode).toBe(401)
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchors)
  })

  it('accepts padded base64url and stores it byte for byte', async () => {
    let payload = randomPayload(31)
    while (payload.length % 4 === 0) payload = randomPayload(31)
    payload += '='.repeat(4 - (payload.length % 4))
    const body = { ...newBody(), encryptedPayload: payload }
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(201)
    const [row] = await query(
      t.database.handle.db,
      sql`SELECT encrypted_payload FROM anchors WHERE tx_hash = ${response.json().txHash}`,
    )
    expect(row?.encrypted_payload).toBe(payload)
  })

  it('keeps anchorCount and the monthly usage in step with created anchors', async () => {
    const fresh = await signInTestUser(t)
    const body = newBody()
    await postRelay(t.app, fresh.headers, body)
    await postRelay(t.app, fresh.headers, body)
    await postRelay(t.app, fresh.headers, newBody())
    const [row] = await query(t.database.handle.db, sql`SELECT anchor_count FROM users WHERE id = ${fresh.id}`)
    const [usage] = await query(t.database.handle.db, sql`SELECT used FROM anchor_usage WHERE user_id = ${fresh.id}`)
    expect(Number(row?.anchor_count)).toBe(2)
    expect(Number(usage?.used)).toBe(2)
  })

  it('reports outcomes, pending transactions and relayer balances in /metrics', async () => {
    await t.app.relayMonitor.tick()
    const metrics = await t.app.inject({ method: 'GET', url: '/metrics' })
    expect(metrics.body).toMatch(/relay_pending_transactions 0/)
    expect(metrics.body).toMatch(/relayer_balance_ether\{relayer="0x[0-9a-f]{40}"\} \d+/)
    expect(metrics.body).toMatch(/relay_outcomes_total\{outcome="confirmed"\} \d+/)
    expect(metrics.body).toMatch(/relay_outcomes_total\{outcome="duplicate"\} \d+/)
  })
})

describe('GET /api/anchors/:compositeHash', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' } })
  })
  afterAll(async () => t?.close())

  it("returns the caller's own anchor and 404 for anyone else's", async () => {
    const owner = await signInTestUser(t)
    const other = await signInTestUser(t)
    const body = newBody()
    const relayed = (await postRelay(t.app, owner.headers, body)).json()
    const mine = await t.app.inject({
      method: 'GET',
      url: `/api/anchors/${body.compositeHash.toUpperCase().replace('0X', '0x')}`,
      headers: owner.headers,
    })
    expect(mine.statusCode).toBe(200)
    expect(mine.json()).toMatchObject({
      txHash: relayed.txHash,
      compositeHash: body.compositeHash,
      previousTxHash: ZERO_TX_HASH,
      status: 'confirmed',
      blockNumber: relayed.blockNumber,
    })
    expect(new Date(mine.json().createdAt).getTime()).toBeGreaterThan(0)
    const theirs = await t.app.inject({
      method: 'GET',
      url: `/api/anchors/${body.compositeHash}`,
      headers: other.headers,
    })
    expect(theirs.statusCode).toBe(404)
    expect(theirs.json().code).toBe('ANCHOR_NOT_FOUND')
    const bad = await t.app.inject({ method: 'GET', url: '/api/anchors/0x12', headers: owner.headers })
    expect(bad.statusCode).toBe(400)
    const anonymous = await t.app.inject({ method: 'GET', url: `/api/anchors/${body.compositeHash}` })
    expect(anonymous.statusCode).toBe(401)
  })
})

describe('POST /api/relay rate limit', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_PER_USER_PER_MINUTE: '2' } })
  })
  afterAll(async () => t?.close())

  it('answers 429 RATE_LIMITED with Retry-After past the per-user limit, and counts each user apart', async () => {
    const user = await signInTestUser(t)
    const other = await signInTestUser(t)
    for (let i = 0; i < 2; i++) expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    const anchors = await count(t.database.handle.db, 'anchors')
    const limited = await postRelay(t.app, user.headers, newBody())
    expect(limited.statusCode).toBe(429)
    expect(limited.json().code).toBe('RATE_LIMITED')
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0)
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchors)
    expect((await postRelay(t.app, other.headers, newBody())).statusCode).toBe(201)
  })
})
