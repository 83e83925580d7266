// The database forgets what the relayer did (a restore from an older backup, a failover to a standby that had not
// received the last commits): the reconciliation finds every anchor of its keys on chain, records it, never hands out
// a nonce the chain consumed, and a client's repeat gets the anchor it was answered instead of a second one.
import { sql } from 'drizzle-orm'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { quotaPeriod } from '../../src/db/schema.ts'
import { runReconcileCommand } from '../../src/operator/reconcile-command.ts'
import { createRelayContext, relayerSettingsOf } from '../../src/relayer/create-relay-context.ts'
import { reserveAnchors } from '../../src/relayer/outbox/reservations.ts'
import { slotOf } from '../../src/relayer/relay-context.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { captureLogs } from '../helpers/log-capture.ts'
import { capturedOutput } from '../helpers/processes/captured-output.ts'
import {
  anchorRow,
  forgetAnchors,
  newBody,
  nextNonceRow,
  poolMined,
  postRelay,
  query,
  type RelayBody,
  rpc,
  timesOnChain,
} from './relay-helpers.ts'

describe('reconciliation with the chain after the database forgot', () => {
  let t: TestApp
  let user: SignedInUser
  let lines: string[]

  beforeAll(async () => {
    const captured = captureLogs('info')
    lines = captured.lines
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0' }, logger: captured.logger })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  const db = () => t.database.handle.db
  const relayed = async (body: RelayBody) => {
    const response = await postRelay(t.app, user.headers, body)
    expect(response.statusCode).toBe(201)
    return response.json().txHash as Hex
  }
  const nextNonce = () => nextNonceRow(db())
  const anchorOf = (compositeHash: string) => anchorRow(db(), compositeHash)
  const onChain = (compositeHash: string) => timesOnChain(t.testChain, compositeHash)
  const forget = (bodies: RelayBody[], nonceBefore: number) => forgetAnchors(db(), bodies, nonceBefore)

  it('records the forgotten anchors without ciphertext, answers a repeat with its anchor, and reuses no nonce', async () => {
    await relayed(newBody())
    const nonceBefore = await nextNonce()
    const forgotten = [newBody(), newBody(), newBody()]
    const answered: Hex[] = []
    for (const body of forgotten) answered.push(await relayed(body))
    await forget(forgotten, nonceBefore)
    t.app.relayer.reconciliation.require('restored from a backup (test)')

    // The client repeats its relay (it never heard back, say): the anchor it was answered, not a second one.
    const repeat = await postRelay(t.app, user.headers, forgotten[0])
    expect(repeat.statusCode).toBe(200)
    expect(repeat.json()).toMatchObject({ txHash: answered[0], status: 'confirmed' })
    for (const [i, body] of forgotten.entries()) {
      expect(await onChain(body.compositeHash)).toBe(1)
      expect(await anchorOf(body.compositeHash)).toMatchObject({
        tx_hash: answered[i],
        status: 'confirmed',
        encrypted_payload: null,
        user_id: null,
        payload_erased_at: null,
      })
      expect((await anchorOf(body.compositeHash))!.reconciled_at).not.toBeNull()
    }
    expect(await nextNonce()).toBe(nonceBefore + 3)

    // A new anchor takes the next nonce the chain has not used.
    const fresh = newBody()
    await relayed(fresh)
    expect(Number((await anchorOf(fresh.compositeHash))!.nonce)).toBe(nonceBefore + 3)

    // Verification answers from the chain; the ciphertext is not there to answer.
    const verify = await t.app.inject(`/api/verify/${answered[1]}`)
    expect(verify.statusCode).toBe(200)
    expect(verify.json()).toMatchObject({ encryptedPayload: null, payloadErased: false })
    expect(verify.json().chain.at(-1)).toMatchObject({ compositeHash: forgotten[1]!.compositeHash })

    const metrics = (await t.app.inject('/metrics')).body
    expect(metrics).toContain('relay_anchors_reconciled_total{kind="recovered"} 3')
    const alerts = lines.filter((line) => line.includes('ALERT anchor recovered from the chain'))
    expect(alerts).toHaveLength(3)
    expect(alerts.join('')).toContain(answered[2])
    expect(lines.some((line) => line.includes('reconciled with the chain: found what the database forgot'))).toBe(true)
  })

  it('re-attaches a reservation whose transaction record was lost to the transaction the chain mined', async () => {
    const body = newBody()
    const txHash = await relayed(body)
    const anchor = await anchorOf(body.compositeHash)
    // As a standby that had the reservation but not the signed transaction (or the receipt).
    await db().transaction(async (tx) => {
      await tx.execute(sql`DELETE FROM relay_transactions WHERE anchor_id = ${anchor!.id}`)
      await tx.execute(
        sql`UPDATE anchors SET tx_hash = ${`unsigned:${crypto.randomUUID()}`}, status = 'pending',
                   block_number = NULL, confirmed_at = NULL WHERE id = ${anchor!.id}`,
      )
    })
    const report = await t.app.relayer.reconciliation.run()
    expect(report).toMatchObject({ adopted: 1, recovered: 0 })
    expect(await anchorOf(body.compositeHash)).toMatchObject({
      id: anchor!.id,
      tx_hash: txHash,
      status: 'confirmed',
      encrypted_payload: body.encryptedPayload,
      reconciled_at: null,
    })
    // The monitor finds nothing left to sign or send: the chain still holds it once.
    await t.app.relayMonitor.tick()
    await poolMined(t.testChain)
    expect(await onChain(body.compositeHash)).toBe(1)
    expect((await postRelay(t.app, user.headers, body)).json()).toMatchObject({ txHash, status: 'confirmed' })
  })

  it('moves an anchor reserved on a nonce the chain consumed to a fresh one, and it still gets anchored once', async () => {
    const nonceBefore = await nextNonce()
    const forgotten = newBody()
    const minedHash = await relayed(forgotten)
    await forget([forgotten], nonceBefore)
    // A reservation made on the forgetful database, before anything reconciled: it took the consumed nonce.
    const slot = slotOf(t.app.relayer, t.chain.relayers[0]!.address)
    const racing = newBody()
    const [reserved] = await reserveAnchors(
      db(),
      slot,
      [{ ...racing, userId: user.id, period: quotaPeriod().period }],
      { plans: { free: 1_000 }, defaultPlan: 'free' },
    )
    expect(reserved).toMatchObject({ kind: 'reserved', nonce: nonceBefore })

    await t.app.relayer.reconciliation.run()
    const recovered = await anchorOf(forgotten.compositeHash)
    expect(recovered).toMatchObject({ tx_hash: minedHash })
    expect(Number(recovered!.nonce)).toBe(nonceBefore)
    const moved = await anchorOf(racing.compositeHash)
    expect(Number(moved!.nonce)).toBeGreaterThan(nonceBefore)
    expect(String(moved!.tx_hash)).toMatch(/^unsigned:/)

    // The monitor signs what its request left unsigned (as after a crash) once it is old enough, and sends it.
    await db().execute(sql`UPDATE anchors SET created_at = now() - interval '1 minute' WHERE id = ${moved!.id}`)
    await t.app.relayMonitor.tick()
    await poolMined(t.testChain)
    await t.app.relayMonitor.tick()
    const sent = await anchorOf(racing.compositeHash)
    expect(sent).toMatchObject({ status: 'confirmed' })
    expect(Number(sent!.nonce)).toBe(Number(moved!.nonce))
    expect(await onChain(racing.compositeHash)).toBe(1)
    expect(await onChain(forgotten.compositeHash)).toBe(1)
  })

  it("is the operator's command too, printing what it found", async () => {
    const nonceBefore = await nextNonce()
    const forgotten = [newBody(), newBody()]
    for (const body of forgotten) await relayed(body)
    await forget(forgotten, nonceBefore)
    // As `npm run admin -- reconcile` builds it: its own relayer context on the service's database and chain.
    const context = createRelayContext({
      db: db(),
      chain: t.chain,
      ...relayerSettingsOf(t.config),
      log: t.app.log,
    })
    const output = capturedOutput()
    let closed = false
    const code = await runReconcileCommand({
      stdout: output.stdout,
      open: async () => ({
        reconcile: () => context.reconciliation.run(),
        close: async () => {
          closed = true
        },
      }),
    })
    expect(code).toBe(0)
    expect(closed).toBe(true)
    const { stdout } = output.text()
    expect(stdout).toContain('recovered 2 (unknown to the database')
    expect(stdout).toContain(
      `nonce row of ${t.chain.relayers[0]!.address.toLowerCase()} raised from ${nonceBefore} to ${nonceBefore + 2}`,
    )
    for (const body of forgotten) expect((await anchorOf(body.compositeHash))!.reconciled_at).not.toBeNull()
  })

  it('holds relays back while a reconciliation it requires runs, not only until it starts', async () => {
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    try {
      // A transaction of the key in the node's pool: the reconciliation waits for it to be mined before it reads.
      const relayer = t.testChain.account(0)
      await t.testChain.walletClient(0).sendTransaction({ to: relayer.address, value: 0n, nonce: await nextNonce() })
      t.app.relayer.reconciliation.require('a test')
      const running = t.app.relayer.reconciliation.run()
      const body = newBody()
      let answered = false
      const relay = postRelay(t.app, user.headers, body).then((response) => {
        answered = true
        return response
      })
      await new Promise((resolve) => setTimeout(resolve, 300))
      expect(answered).toBe(false)
      expect(await anchorOf(body.compositeHash)).toBeUndefined()
      await rpc(t.testChain.rpcUrl, 'evm_mine')
      await running
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
      await rpc(t.testChain.rpcUrl, 'evm_mine')
      expect([201, 202]).toContain((await relay).statusCode)
      expect(await onChain(body.compositeHash)).toBeLessThanOrEqual(1)
    } finally {
      await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
    }
  })

  it('reports a composite hash the keys anchored twice, and leaves the confirmed anchor as it is', async () => {
    const body = newBody()
    const first = await relayed(body)
    // The same composite hash anchored again by the relayer key, outside the service.
    const second = await t.testChain.walletClient(0).writeContract({
      address: t.chain.contractAddress,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [body.compositeHash as Hex, body.previousTxHash as Hex],
    })
    await t.testChain.publicClient.waitForTransactionReceipt({ hash: second })
    const report = await t.app.relayer.reconciliation.run()
    expect(report).toMatchObject({ doubled: 1, recovered: 0, adopted: 0 })
    expect(await anchorOf(body.compositeHash)).toMatchObject({ tx_hash: first, status: 'confirmed' })
    const [recorded] = await query<{ status: string }>(
      db(),
      sql`SELECT status FROM relay_transactions WHERE tx_hash = ${second.toLowerCase()}`,
    )
    expect(recorded).toEqual({ status: 'failed' })
    expect((await t.app.inject('/metrics')).body).toContain('relay_anchors_reconciled_total{kind="doubled"} 1')
    expect(lines.some((line) => line.includes('ALERT composite hash anchored twice') && line.includes(second))).toBe(
      true,
    )
    // Said once: the next reconciliation knows the transaction.
    expect(await t.app.relayer.reconciliation.run()).toMatchObject({ doubled: 0 })
  })

  it('finds nothing to record when the database knows everything', async () => {
    const report = await t.app.relayer.reconciliation.run()
    expect(report).toMatchObject({ recovered: 0, adopted: 0, doubled: 0, raised: [], unmined: [] })
    expect(report.events).toBeGreaterThan(0)
  })
})
