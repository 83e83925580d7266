// The quick start, as a user runs it: the service starts on embedded defaults, serves, stops on SIGTERM, and a
// restart finds the same contract and every earlier transaction.
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, createWalletClient, type Hash, http } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { freePort } from '../../bench/soak/free-port.ts'
import { anvilAccount } from '../../src/chain/anvil-accounts.ts'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { createTestDatabase, type TestDatabase, testPostgresUrl } from '../helpers/db/database.ts'
import { type ServerProcess, startServerProcess } from '../helpers/processes/server-process.ts'

interface Info {
  chainId: number
  contractAddress: `0x${string}`
  relayers: `0x${string}`[]
  publicRpcUrl: string
  verifyBaseUrl: string
}

describe('the service process on embedded defaults', () => {
  let dataDir: string
  let database: TestDatabase | undefined
  let server: ServerProcess | undefined
  let env: Record<string, string>

  afterAll(async () => {
    await server?.stop('SIGKILL')
    await database?.close()
    if (dataDir) await rm(dataDir, { recursive: true, force: true })
  })

  it('starts, serves, stops on SIGTERM and comes back with the same chain state', async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'anchor-acceptance-'))
    // The embedded chain's own port, which only tools on this machine use: the same at every start.
    const chainPort = await freePort()
    const chainUrl = `http://127.0.0.1:${chainPort}`
    env = { DATA_DIR: dataDir, EMBEDDED_CHAIN_PORT: String(chainPort) }
    if (testPostgresUrl !== undefined) {
      database = await createTestDatabase()
      env.DATABASE_URL = database.url!
    }

    server = await startServerProcess(env)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    const info = (await (await fetch(`${server.url}/api/info`)).json()) as Info
    expect(info.chainId).toBe(31337)
    expect(info.contractAddress).toMatch(/^0x[0-9a-f]{40}$/)
    // PORT=0: the URLs that default to the service's own address name the port it bound, never port 0.
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/)
    expect(info.verifyBaseUrl).toBe(server.url)
    // The default CORS origin is the service's own (a public verification's answers say `*` whatever it is).
    const preflight = await fetch(`${server.url}/api/relay`, {
      method: 'OPTIONS',
      headers: { origin: server.url, 'access-control-request-method': 'POST' },
    })
    expect(preflight.headers.get('access-control-allow-origin')).toBe(server.url)

    // What is published reads the chain through the service and writes nothing.
    expect(info.publicRpcUrl).toBe(`${server.url}/rpc`)
    const write = await fetch(info.publicRpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_impersonateAccount', params: [info.relayers[0]] }),
    })
    expect(((await write.json()) as { error: { code: number } }).error.code).toBe(-32601)

    // An anchor sent straight to the embedded chain, at its own port, by the service's relayer account.
    const relayer = anvilAccount(1)
    expect(info.relayers).toEqual([relayer.address.toLowerCase()])
    const wallet = createWalletClient({ account: relayer, transport: http(chainUrl) })
    const publicClient = createPublicClient({ transport: http(info.publicRpcUrl), pollingInterval: 20 })
    const txHash: Hash = await wallet.writeContract({
      chain: null,
      address: info.contractAddress,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [`0x${'aa'.repeat(32)}`, `0x${'00'.repeat(32)}`],
    })
    const receipt = await publicClient.waitForTransactionReceipt({ hash: txHash })

    expect(await server.stop('SIGTERM')).toBe(0)
    expect(server.output.join('\n')).toContain('"msg":"stopped"')
    await expect(fetch(chainUrl, { method: 'POST' })).rejects.toThrow()

    server = await startServerProcess(env)
    const again = (await (await fetch(`${server.url}/api/info`)).json()) as Info
    expect(again.contractAddress).toBe(info.contractAddress)
    // The chain's port is the same as before: a tool pointed at it keeps working.
    expect(await createPublicClient({ transport: http(chainUrl) }).getChainId()).toBe(31337)
    const afterRestart = createPublicClient({ transport: http(again.publicRpcUrl) })
    const receiptAgain = await afterRestart.getTransactionReceipt({ hash: txHash })
    expect(receiptAgain.blockNumber).toBe(receipt.blockNumber)
    expect(receiptAgain.logs[0]?.address.toLowerCase()).toBe(info.contractAddress)
    expect(await server.stop('SIGINT')).toBe(0)
  }, 120_000)

  it('refuses to start in production without its required settings, naming them', async () => {
    const failing = startServerProcess({ NODE_ENV: 'production', DATA_DIR: join(tmpdir(), 'never-created') })
    await expect(failing).rejects.toThrow(/exited with 78[\s\S]*JWT_SECRET: required in production/)
  })
})
