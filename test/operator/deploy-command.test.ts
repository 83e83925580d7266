import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PassThrough, Readable } from 'node:stream'
import { type Address, getAddress } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anvilPrivateKey } from '../../src/chain/anvil-accounts.ts'
import { isRelayer } from '../../src/chain/deploy-document-anchors.ts'
import { documentAnchorsAbi, documentAnchorsDeployedBytecode } from '../../src/chain/document-anchors-artifact.ts'
import { runDeployCommand } from '../../src/operator/deploy-command.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'

// A deployer distinct from the helper's account 0, which owns nothing here.
const DEPLOYER_KEY = anvilPrivateKey(9)

let chain: TestChain
let dir: string

beforeAll(async () => {
  ;[chain, dir] = await Promise.all([startTestChain({ deploy: false }), mkdtemp(join(tmpdir(), 'deploy-cli-'))])
})

afterAll(async () => {
  await Promise.all([chain?.stop(), rm(dir, { recursive: true, force: true })])
})

async function run(argv: string[], stdin = '') {
  const stdout = new PassThrough()
  const stderr = new PassThrough()
  const code = await runDeployCommand(argv, { stdin: Readable.from([stdin]), stdout, stderr })
  stdout.end()
  stderr.end()
  return { code, stdout: String(stdout.read() ?? ''), stderr: String(stderr.read() ?? '') }
}

describe('deploy command', () => {
  it('deploys from a key file, authorizes the relayers and prints only the address', async () => {
    const keyFile = join(dir, 'deployer.key')
    await writeFile(keyFile, `${DEPLOYER_KEY}\n`, { mode: 0o600 })
    const relayers = [chain.account(1).address, chain.account(2).address]
    const result = await run([
      '--rpc',
      chain.rpcUrl,
      '--private-key-file',
      keyFile,
      ...relayers.flatMap((r) => ['--relayer', r]),
    ])

    expect(result).toMatchObject({ code: 0, stdout: expect.stringMatching(/^0x[0-9a-fA-F]{40}\n$/) })
    const contract = getAddress(result.stdout.trim()) as Address
    expect(await chain.publicClient.getCode({ address: contract })).toBe(documentAnchorsDeployedBytecode)
    for (const relayer of relayers) expect(await isRelayer(chain.publicClient, { contract, relayer })).toBe(true)
    const owner = await chain.publicClient.readContract({
      address: contract,
      abi: documentAnchorsAbi,
      functionName: 'owner',
    })
    expect(owner).toBe(chain.account(9).address)
    expect(result.stderr).not.toContain(DEPLOYER_KEY.slice(2))
  })

  it('reads the key from stdin', async () => {
    const result = await run(['--rpc', chain.rpcUrl, '--chain-id', String(chain.chain.id)], DEPLOYER_KEY.slice(2))
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^0x[0-9a-fA-F]{40}\n$/)
  })

  it('refuses a key on the command line, a bad key, a bad relayer and a mismatched chain id', async () => {
    const rpc = ['--rpc', chain.rpcUrl]
    expect(await run([...rpc, '--private-key', DEPLOYER_KEY])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Unknown option '--private-key' (use --private-key-file or stdin)"),
    })
    expect(await run(rpc, '0x1234')).toMatchObject({ code: 2, stderr: expect.stringContaining('32 bytes of hex') })
    expect(await run([...rpc, '--relayer', '0x12'], DEPLOYER_KEY)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--relayer 0x12 is not an address'),
    })
    expect(await run([...rpc, '--chain-id', '1'], DEPLOYER_KEY)).toMatchObject({
      code: 1,
      stderr: expect.stringContaining('reports chain id 31337, not 1; nothing was deployed'),
    })
    expect(await run([], DEPLOYER_KEY)).toMatchObject({ code: 2, stderr: expect.stringContaining('--rpc is required') })
  })

  it('refuses bad usage of the rotation subcommands before touching the chain or the database', async () => {
    const rpc = ['--rpc', chain.rpcUrl]
    const relayer = ['--relayer', chain.account(1).address]
    expect(await run(['authorize', ...rpc, ...relayer], DEPLOYER_KEY)).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('deploy authorize: --contract is required'),
    })
    expect(await run(['revoke', ...rpc, ...relayer, '--private-key', DEPLOYER_KEY])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining("Unknown option '--private-key' (use --private-key-file or stdin)"),
    })
    expect(await run(['drain', ...rpc, '--relayer', '0x12'])).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--relayer 0x12 is not an address'),
    })
    expect(
      await run(['revoke', ...rpc, ...relayer, '--contract', chain.account(1).address, '--grace-seconds', '1.5']),
    ).toMatchObject({
      code: 2,
      stderr: expect.stringContaining('--grace-seconds must be a whole number of seconds'),
    })
  })
})
