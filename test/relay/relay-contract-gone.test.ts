// A node that lost the contract (restarted with an empty chain, or pointed at another one) still mines every call to
// its address, successfully and without an event. Confirmed means the event is there: such an anchor fails and answers
// 502, later relays are refused before anything is stored, and /readyz says the service is not ready.
import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentAnchorsDeployedBytecode } from '../../src/chain/document-anchors-artifact.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { count, newBody, postRelay, query, rpc } from './relay-helpers.ts'

describe('POST /api/relay when the node no longer holds the contract', () => {
  let t: TestApp
  let user: SignedInUser

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '3000' } })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  const setCode = (code: Hex) => rpc(t.testChain.rpcUrl, 'anvil_setCode', [t.testChain.contract, code])

  it('fails the anchor mined without its event, refuses new ones, and is not ready until the contract is back', async () => {
    expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
    await setCode('0x')

    // Mined (the call succeeds), but no DocumentAnchored event: a failed anchor and a 502, never a 201.
    const body = newBody()
    const mined = await postRelay(t.app, user.headers, body)
    expect(mined.statusCode).toBe(502)
    expect(mined.json().code).toBe('CHAIN_UNAVAILABLE')
    const [row] = await query<{ status: string; tx_hash: Hex }>(
      t.database.handle.db,
      sql`SELECT status, tx_hash FROM anchors WHERE composite_hash = ${body.compositeHash}`,
    )
    expect(row!.status).toBe('failed')
    const receipt = await t.testChain.publicClient.getTransactionReceipt({ hash: row!.tx_hash })
    expect(receipt).toMatchObject({ status: 'success', logs: [] })
    expect((await postRelay(t.app, user.headers, body)).statusCode).toBe(502)

    // The relayer checked the contract at once: the next relay stores nothing and sends nothing.
    const anchors = await count(t.database.handle.db, 'anchors')
    const refused = await postRelay(t.app, user.headers, newBody())
    expect(refused.statusCode).toBe(502)
    expect(refused.json().detail).toContain('does not serve the anchoring contract')
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchors)

    const ready = await t.app.inject('/readyz')
    expect(ready.statusCode).toBe(503)
    expect(ready.json()).toMatchObject({ code: 'NOT_READY', checks: { chain: 'ok', contract: 'missing' } })
    expect(ready.json().detail).toContain('no anchoring contract')
    const metrics = (await t.app.inject('/metrics')).body
    expect(metrics).toContain('relay_anchors_failed_total{reason="no_event"} 1')
    expect(metrics).toMatch(/^relay_contract_missing 1$/m)

    // Back: /readyz (as the monitor's next pass would) finds it, and relays resume.
    await setCode(documentAnchorsDeployedBytecode)
    expect((await t.app.inject('/readyz')).statusCode).toBe(200)
    expect((await t.app.inject('/metrics')).body).toMatch(/^relay_contract_missing 0$/m)
    expect((await postRelay(t.app, user.headers, newBody())).statusCode).toBe(201)
  })

  it('names a node serving another chain', async () => {
    // The app is told chain 999; the node it talks to serves this file's chain (31337).
    const swapped = await createTestApp({
      env: { RELAY_MONITOR_INTERVAL_MS: '0' },
      testChain: t.testChain,
      chainContext: () => ({ chainId: 999 }),
    })
    try {
      const ready = await swapped.app.inject('/readyz')
      expect(ready.statusCode).toBe(503)
      expect(ready.json()).toMatchObject({ checks: { chain: 'wrong-chain' } })
      expect(ready.json().detail).toContain('another chain')
    } finally {
      await swapped.close()
    }
  })
})
