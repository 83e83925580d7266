// The owner's rotation subcommands run the way an operator runs them, `npm run deploy -- drain …` as a process of its
// own: they find the service's PostgreSQL through DATABASE_URL (the in-process tests hand them a database instead),
// and refuse to run without one, since an embedded PGlite belongs to the one service process that has it open.
import { execFile } from 'node:child_process'
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilAccount } from '../../src/chain/anvil-accounts.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'
import { createTestDatabase, testPostgresUrl } from '../helpers/db/database.ts'
import { query } from '../relay/relay-helpers.ts'

const RELAYER = anvilAccount(1).address

interface Outcome {
  code: number
  stderr: string
}

/** `npm run deploy -- <argv>` as npm runs it, with DATABASE_URL set to `databaseUrl` (empty: not set). */
function deploy(argv: readonly string[], databaseUrl: string): Promise<Outcome> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['bin/deploy.js', ...argv],
      { env: { ...process.env, DATABASE_URL: databaseUrl }, timeout: 60_000 },
      (error, _stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stderr }),
    )
  })
}

describe('deploy drain, undrain and revoke as a process of their own', () => {
  let chain: TestChain
  beforeAll(async () => {
    chain = await startTestChain()
  }, 60_000)
  afterAll(async () => {
    await chain?.stop()
  })

  it('refuses to run without DATABASE_URL, exit 2, naming it', async () => {
    const outcome = await deploy(['drain', '--rpc', chain.rpcUrl, '--relayer', RELAYER], '')
    expect(outcome.code).toBe(2)
    expect(outcome.stderr).toContain('DATABASE_URL must name the service database (PostgreSQL)')
  }, 60_000)

  it.runIf(testPostgresUrl !== undefined)(
    'records a drain in the PostgreSQL DATABASE_URL names, takes it back, refuses a revoke of a key not draining',
    async () => {
      const database = await createTestDatabase()
      try {
        const drains = () =>
          query<{ chain_id: number; relayer_address: string }>(
            database.handle.db,
            sql`SELECT chain_id, relayer_address FROM relayer_drains`,
          )
        const chainId = await chain.publicClient.getChainId()
        const drain = await deploy(['drain', '--rpc', chain.rpcUrl, '--relayer', RELAYER], database.url!)
        expect(drain).toMatchObject({ code: 0 })
        expect(drain.stderr).toContain(`relayer ${RELAYER} draining on chain ${chainId}`)
        expect(await drains()).toEqual([{ chain_id: chainId, relayer_address: RELAYER.toLowerCase() }])

        const undrain = await deploy(['undrain', '--rpc', chain.rpcUrl, '--relayer', RELAYER], database.url!)
        expect(undrain).toMatchObject({ code: 0 })
        expect(undrain.stderr).toContain('takes work again')
        expect(await drains()).toEqual([])

        const revoke = await deploy(
          ['revoke', '--rpc', chain.rpcUrl, '--relayer', RELAYER, '--contract', chain.contract],
          database.url!,
        )
        expect(revoke.code).toBe(1)
        expect(revoke.stderr).toContain('refused: the key is not draining')
      } finally {
        await database.close()
      }
    },
    60_000,
  )
})
