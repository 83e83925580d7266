// Relayer key rotation with the service running, through the owner's `deploy` subcommands on anvil: a key authorized
// on the contract starts relaying; a key drained while relays run takes no new anchors, its pending ones confirm and no
// request fails; revoke is refused until it is drained and accepted then; its anchors keep verifying afterwards.
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { sql } from 'drizzle-orm'
import type { Address } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount, anvilPrivateKey } from '../../src/chain/anvil-accounts.ts'
import { isRelayer } from '../../src/chain/deploy-document-anchors.ts'
import { runDeployCommand } from '../../src/operator/deploy-command.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, postRelay, query, rpc } from './relay-helpers.ts'

// Account 0 deployed the test contract, so it is the owner; 1 is the old relayer key, 3 the new one.
const OLD = 1
const NEW = 3

describe('relayer key rotation without downtime', () => {
  let t: TestApp
  let users: SignedInUser[]
  let dir: string
  let ownerKeyFile: string
  const address = (index: number) => anvilAccount(index).address.toLowerCase() as Address

  beforeAll(async () => {
    ;[t, dir] = await Promise.all([
      createTestApp({
        chain: { relayers: [anvilAccount(OLD).address] },
        // The new key is in the service's keys from the start (a rolling restart in production) but not yet on the
        // contract: the test authorizes it before any relay.
        chainContext: (chain) => ({ relayers: [chain.account(OLD), chain.account(NEW)] }),
        // Long enough for a key's relays to reach the node one after another (nonce order) under the test's load.
        env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '4000', RELAY_FEE_CACHE_MS: '0' },
      }),
      mkdtemp(join(tmpdir(), 'rotation-')),
    ])
    ownerKeyFile = join(dir, 'owner.key')
    await writeFile(ownerKeyFile, anvilPrivateKey(0), { mode: 0o600 })
    users = await Promise.all(Array.from({ length: 4 }, () => signInTestUser(t)))
  })
  afterAll(async () => {
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true]).catch(() => {})
    await Promise.all([t?.close(), rm(dir, { recursive: true, force: true })])
  })

  async function deploy(subcommand: string, relayer: number, ...more: string[]) {
    const stdout = new PassThrough()
    const stderr = new PassThrough()
    const argv = [subcommand, '--rpc', t.testChain.rpcUrl, '--relayer', anvilAccount(relayer).address, ...more]
    if (subcommand === 'authorize' || subcommand === 'revoke') {
      argv.push('--contract', t.testChain.contract, '--private-key-file', ownerKeyFile)
    }
    const code = await runDeployCommand(argv, {
      stdin: Readable.from([]),
      stdout,
      stderr,
      // The test app's own database; the command must not close it.
      openDatabase: async () => ({ db: t.database.handle.db, close: async () => {} }),
    })
    stderr.end()
    return { code, stderr: String(stderr.read() ?? '') }
  }

  const authorized = (index: number) =>
    isRelayer(t.testChain.publicClient, { contract: t.testChain.contract, relayer: anvilAccount(index).address })

  const relayMany = (n: number) =>
    Promise.all(Array.from({ length: n }, (_, i) => postRelay(t.app, users[i % users.length]!.headers, newBody())))

  async function anchorsBy(index: number) {
    return query<{ tx_hash: string; status: string }>(
      t.database.handle.db,
      sql`SELECT tx_hash, status FROM anchors WHERE relayer_address = ${address(index)} ORDER BY nonce`,
    )
  }

  it('authorizes a new key on the contract, and the service relays through it', async () => {
    expect(await authorized(NEW)).toBe(false)
    expect(await deploy('authorize', NEW)).toMatchObject({ code: 0 })
    expect(await authorized(NEW)).toBe(true)

    const responses = await relayMany(12)
    expect(responses.map((r) => r.statusCode)).toEqual(Array(12).fill(201))
    const byNew = await anchorsBy(NEW)
    expect(byNew.length).toBeGreaterThan(0)
    expect(byNew.every((anchor) => anchor.status === 'confirmed')).toBe(true)
  })

  it('drains a key while relays run: no new anchors on it, its pending ones confirm, no request fails', async () => {
    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [false])
    // Relays left pending on both keys (202: nothing is mined).
    const before = await relayMany(8)
    expect(before.map((r) => r.statusCode)).toEqual(Array(8).fill(202))
    const pendingOnOld = (await anchorsBy(OLD)).filter((anchor) => anchor.status === 'pending')
    expect(pendingOnOld.length).toBeGreaterThan(0)

    // The drain lands while more relays are under way; the pool honours it on its next monitor pass.
    const during = relayMany(8)
    expect(await deploy('drain', OLD)).toMatchObject({ code: 0 })
    await t.app.relayMonitor.tick()
    expect((await during).every((r) => r.statusCode === 202)).toBe(true)

    const oldCount = (await anchorsBy(OLD)).length
    const after = await relayMany(8)
    expect(after.every((r) => r.statusCode === 202)).toBe(true)
    expect((await anchorsBy(OLD)).length).toBe(oldCount)

    const refused = await deploy('revoke', OLD, '--grace-seconds', '0')
    expect(refused.code).toBe(1)
    expect(refused.stderr).toMatch(/refused: the key still has \d+ pending transaction/)
    expect(await authorized(OLD)).toBe(true)

    await rpc(t.testChain.rpcUrl, 'evm_setAutomine', [true])
    await rpc(t.testChain.rpcUrl, 'evm_mine')
    await t.app.relayMonitor.tick()
    const statuses = await query<{ status: string }>(t.database.handle.db, sql`SELECT status FROM anchors`)
    expect(statuses.length).toBe(12 + 24)
    expect(statuses.every((row) => row.status === 'confirmed')).toBe(true)
  })

  it('refuses to revoke a key not draining, or drained too recently, and revokes a drained one', async () => {
    expect(await deploy('revoke', NEW, '--grace-seconds', '0')).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('the key is not draining'),
    })
    expect(await deploy('revoke', OLD)).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/the drain began \d+ s ago, less than 60 s/),
    })
    expect(await authorized(OLD)).toBe(true)

    expect(await deploy('revoke', OLD, '--grace-seconds', '0')).toMatchObject({ code: 0 })
    expect(await authorized(OLD)).toBe(false)
    expect(await authorized(NEW)).toBe(true)
  })

  it('keeps verifying the anchors a revoked key sent, while relays go on through the new key', async () => {
    const oldAnchors = await anchorsBy(OLD)
    expect(oldAnchors.length).toBeGreaterThan(0)
    for (const anchor of [oldAnchors[0]!, oldAnchors.at(-1)!]) {
      const response = await t.app.inject({ method: 'GET', url: `/api/verify/${anchor.tx_hash}` })
      expect(response.statusCode).toBe(200)
      expect(response.json()).toMatchObject({ txHash: anchor.tx_hash, signer: address(OLD) })
    }
    const response = await postRelay(t.app, users[0]!.headers, newBody())
    expect(response.statusCode).toBe(201)
    expect((await anchorsBy(NEW)).map((anchor) => anchor.tx_hash)).toContain(response.json().txHash)
  })
})
