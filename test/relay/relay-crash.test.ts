import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Hex } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'
import { newBody, rpc } from './relay-helpers.ts'
import { createServerUser, httpRelay, type ServerProcess, serverEnv, spawnServer } from './relay-process.ts'

describe('relay across a crash (SIGKILL)', () => {
  let chain: TestChain
  let dataDir: string
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'relay-crash-'))
    chain = await startTestChain()
    // On PostgreSQL the servers share the test's throwaway database; on PGlite they open files under DATA_DIR.
    database = process.env.DATABASE_URL ? await createTestDatabase() : undefined
  })
  afterAll(async () => {
    await server?.kill('SIGKILL')
    await database?.close()
    await chain?.stop()
    await rm(dataDir, { recursive: true, force: true })
  })

  it('ends the anchor confirmed after a restart, and the client retry gets the same txHash', async () => {
    const user = await createServerUser(dataDir, database)
    const env = {
      ...serverEnv(chain, dataDir, database),
      RELAY_WAIT_MS: '300',
      RELAY_MONITOR_INTERVAL_MS: '100',
      // No fee bump in this test: the hash the client saw must be the one that is mined.
      RELAY_STUCK_AFTER_MS: '600000',
    }
    // Nothing is mined while the first process lives: the receipt cannot arrive before the kill.
    await rpc(chain.rpcUrl, 'evm_setAutomine', [false])
    server = await spawnServer(env)
    const body = newBody()
    const first = await httpRelay(server.url, user.authorization, body)
    expect(first.status).toBe(202)
    const txHash = first.json.txHash as Hex
    await server.kill('SIGKILL')
    // The node loses it too, as if the process had died right after storing it and before the send.
    await rpc(chain.rpcUrl, 'anvil_dropTransaction', [txHash])

    server = await spawnServer(env)
    // The restarted monitor re-sends the stored transaction; mining resumes.
    await expect
      .poll(
        async () =>
          chain.publicClient.getTransaction({ hash: txHash }).then(
            () => true,
            () => false,
          ),
        {
          timeout: 10_000,
        },
      )
      .toBe(true)
    await rpc(chain.rpcUrl, 'evm_setAutomine', [true])
    await rpc(chain.rpcUrl, 'evm_mine')
    const receipt = await chain.publicClient.waitForTransactionReceipt({ hash: txHash, timeout: 10_000 })
    await expect
      .poll(
        async () => {
          const response = await fetch(`${server!.url}/api/anchors/${body.compositeHash}`, {
            headers: { authorization: user.authorization },
          })
          return response.json()
        },
        { timeout: 10_000 },
      )
      .toMatchObject({ status: 'confirmed', txHash, blockNumber: Number(receipt.blockNumber) })
    const retry = await httpRelay(server.url, user.authorization, body)
    expect(retry.status).toBe(200)
    expect(retry.json).toMatchObject({ txHash, status: 'confirmed', blockNumber: Number(receipt.blockNumber) })
  }, 120_000)
})
