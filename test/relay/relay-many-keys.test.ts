// Several relayer keys end to end: concurrent relays spread over them, each key's nonces stay its own and gap-free,
// and a key whose balance falls below the minimum takes no new work (all of them: 502, nothing written).
import { sql } from 'drizzle-orm'
import { type Address, parseEther, toHex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../src/chain/anvil-accounts.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { count, expectContiguous, newBody, poolMined, postRelay, query, rpc } from './relay-helpers.ts'

const KEYS = [0, 1, 2] as const

describe('POST /api/relay with several relayer keys', () => {
  let t: TestApp
  let users: SignedInUser[]
  const address = (index: number) => t.testChain.account(index).address.toLowerCase() as Address
  const setBalance = (index: number, wei: bigint) =>
    rpc(t.testChain.rpcUrl, 'anvil_setBalance', [t.testChain.account(index).address, toHex(wei)])

  beforeAll(async () => {
    t = await createTestApp({
      chain: { relayers: [anvilAccount(1).address, anvilAccount(2).address] },
      chainContext: (chain) => ({ relayers: KEYS.map((index) => chain.account(index)) }),
      env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '20000', RELAY_MIN_BALANCE_ETH: '1' },
    })
    users = await Promise.all(Array.from({ length: 6 }, () => signInTestUser(t)))
  })
  afterAll(async () => t?.close())

  async function noncesBy(relayer: Address): Promise<number[]> {
    const rows = await query<{ nonce: unknown }>(
      t.database.handle.db,
      sql`SELECT nonce FROM anchors WHERE relayer_address = ${relayer} ORDER BY nonce`,
    )
    return rows.map((row) => Number(row.nonce))
  }

  async function relayMany(n: number) {
    return Promise.all(
      Array.from({ length: n }, (_, i) => postRelay(t.app, users[i % users.length]!.headers, newBody())),
    )
  }

  it('spreads 90 concurrent relays over three keys, each with its own gap-free nonces matching the chain', async () => {
    const startNonces = await Promise.all(
      KEYS.map((index) =>
        t.testChain.publicClient.getTransactionCount({ address: t.testChain.account(index).address }),
      ),
    )
    const responses = await relayMany(90)
    expect(responses.map((r) => r.statusCode).every((status) => status === 201 || status === 202)).toBe(true)
    await t.app.relayMonitor.tick()
    for (const [i, index] of KEYS.entries()) {
      const nonces = await noncesBy(address(index))
      // Each key took a fair share: none idle while another queues.
      expect(nonces.length).toBeGreaterThanOrEqual(20)
      expect(nonces[0]).toBe(startNonces[i])
      expect(expectContiguous(nonces)).toBe(true)
      // A 202 was still in the pool.
      await poolMined(t.testChain, address(index))
      const onChain = await t.testChain.publicClient.getTransactionCount({
        address: t.testChain.account(index).address,
      })
      expect(onChain).toBe(startNonces[i]! + nonces.length)
    }
    expect(await count(t.database.handle.db, 'anchors')).toBe(90)
  })

  it('gives no new work to a key below the minimum balance, and answers 502 with nothing written when all are', async () => {
    await setBalance(2, parseEther('0.5'))
    await t.app.relayMonitor.tick()
    const before = await noncesBy(address(2))
    const responses = await relayMany(20)
    expect(responses.every((r) => r.statusCode === 201)).toBe(true)
    expect(await noncesBy(address(2))).toEqual(before)

    await setBalance(0, 0n)
    await setBalance(1, 0n)
    await t.app.relayMonitor.tick()
    const anchors = await count(t.database.handle.db, 'anchors')
    const refused = await postRelay(t.app, users[0]!.headers, newBody())
    expect(refused.statusCode).toBe(502)
    expect(refused.json().code).toBe('CHAIN_UNAVAILABLE')
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchors)

    // Funded again: work resumes on the next balance check.
    for (const index of KEYS) await setBalance(index, parseEther('100'))
    await t.app.relayMonitor.tick()
    expect((await postRelay(t.app, users[0]!.headers, newBody())).statusCode).toBe(201)
  })
})
