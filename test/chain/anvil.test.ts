import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createPublicClient, http, keccak256, parseEventLogs, stringToHex, zeroHash } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { resolveAnvilBinary, startAnvil } from '../../src/chain/anvil.ts'
import { documentAnchorsAbi, documentAnchorsDeployedBytecode } from '../../src/chain/document-anchors-artifact.ts'
import { LOCAL_POLLING_INTERVAL_MS, startTestChain } from '../helpers/chain/anvil.ts'

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'anvil-test-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

/** Alive and not a zombie: where PID 1 does not reap orphans, a killed orphan lingers as one. */
async function isRunning(pid: number): Promise<boolean> {
  if (process.platform === 'linux') {
    try {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8')
      return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z'
    } catch {
      return false
    }
  }
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

async function eventually(check: () => Promise<boolean>, timeoutMs = 5_000): Promise<boolean> {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (await check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

function clientFor(rpcUrl: string) {
  // No retries: a refused connection should fail at once, not after viem's backoff.
  return createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }), pollingInterval: LOCAL_POLLING_INTERVAL_MS })
}

describe('startAnvil', () => {
  it('starts on a free loopback port with the requested chain id and passes its output to log', async () => {
    const lines: string[] = []
    const started = performance.now()
    const anvil = await startAnvil({ chainId: 4242, log: (line) => lines.push(line) })
    const startMs = performance.now() - started
    try {
      console.log(`anvil ready in ${startMs.toFixed(0)} ms`)
      expect(anvil.rpcUrl).toBe(`http://127.0.0.1:${anvil.port}`)
      expect(anvil.port).toBeGreaterThan(0)
      expect(await clientFor(anvil.rpcUrl).getChainId()).toBe(4242)
      expect(lines).toContain(`Listening on 127.0.0.1:${anvil.port}`)
    } finally {
      await anvil.stop()
    }
  })

  it('stop() ends the process and frees the port, and can be called again', async () => {
    const anvil = await startAnvil()
    expect(await isRunning(anvil.pid)).toBe(true)
    await anvil.stop()
    expect(await isRunning(anvil.pid)).toBe(false)
    await expect(clientFor(anvil.rpcUrl).getChainId()).rejects.toThrow()
    await anvil.stop()
  })

  it('mines only on request with noMining', async () => {
    const chain = await startTestChain({ deploy: false, anvil: { noMining: true } })
    try {
      const hash = await chain.walletClient(0).sendTransaction({ to: chain.account(1).address, value: 1n })
      expect(await chain.publicClient.getBlockNumber()).toBe(0n)
      await chain.publicClient.request({ method: 'evm_mine' } as never)
      expect((await chain.publicClient.waitForTransactionReceipt({ hash })).blockNumber).toBe(1n)
    } finally {
      await chain.stop()
    }
  })

  it('keeps only recent transactions with recentOnly', async () => {
    const chain = await startTestChain({ deploy: false, anvil: { recentOnly: true } })
    try {
      const send = async () => {
        const hash = await chain.walletClient(0).sendTransaction({ to: chain.account(1).address, value: 1n })
        await chain.publicClient.waitForTransactionReceipt({ hash })
        return hash
      }
      const old = await send()
      await chain.publicClient.request({ method: 'anvil_mine', params: ['0x12c'] } as never)
      const recent = await send()
      expect((await chain.publicClient.getTransactionReceipt({ hash: recent })).status).toBe('success')
      await expect(chain.publicClient.getTransactionReceipt({ hash: old })).rejects.toThrow(/could not be found/)
    } finally {
      await chain.stop()
    }
  })

  it('fails with anvil’s own error when the port is taken, and leaves no process', async () => {
    const server: Server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const { port } = server.address() as { port: number }
    try {
      await expect(startAnvil({ port })).rejects.toThrow(
        /anvil did not start: anvil exited[\s\S]*Address already in use/,
      )
    } finally {
      server.close()
    }
  })

  it('stops anvil when the process that started it exits', async () => {
    const script = `
      const { startAnvil } = await import(${JSON.stringify(new URL('../../src/chain/anvil.ts', import.meta.url).href)})
      const anvil = await startAnvil()
      console.log(anvil.pid)
      process.exit(0)
    `
    const { stdout } = await promisify(execFile)(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ])
    const pid = Number(stdout.trim())
    expect(pid).toBeGreaterThan(0)
    expect(await eventually(async () => !(await isRunning(pid)))).toBe(true)
  })

  it('resolves the binary from the platform package and refuses unknown platforms', () => {
    expect(resolveAnvilBinary()).toMatch(/@foundry-rs[/\\]anvil-[a-z0-9]+-[a-z0-9]+[/\\]bin[/\\]anvil(\.exe)?$/)
    expect(() => resolveAnvilBinary('aix', 'ppc64')).toThrow('anvil has no binary for aix-ppc64')
  })
})

describe('startAnvil with a state file', () => {
  it('keeps blocks, transactions, receipts, logs and the contract across a restart', async () => {
    const stateFile = join(dir, 'restart.json')
    const chain = await startTestChain({ anvil: { stateFile } })
    const compositeHash = keccak256(stringToHex('kept across restarts'))
    const hash = await chain.walletClient(0).writeContract({
      address: chain.contract,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [compositeHash, zeroHash],
    })
    const before = await chain.publicClient.waitForTransactionReceipt({ hash })
    // anvil can answer with the pool's copy (no block yet) for a moment after the receipt: wait for the mined one.
    let transaction = await chain.publicClient.getTransaction({ hash })
    for (let tries = 0; transaction.blockHash === null && tries < 50; tries++) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      transaction = await chain.publicClient.getTransaction({ hash })
    }
    expect(transaction.blockHash).toBe(before.blockHash)
    await chain.stop()

    const anvil = await startAnvil({ stateFile })
    try {
      const client = clientFor(anvil.rpcUrl)
      expect(await client.getBlockNumber()).toBe(before.blockNumber)
      const after = await client.getTransactionReceipt({ hash })
      expect(after).toEqual(before)
      const [event] = parseEventLogs({ abi: documentAnchorsAbi, logs: after.logs, eventName: 'DocumentAnchored' })
      expect(event?.args.compositeHash).toBe(compositeHash)
      expect(await client.getTransaction({ hash })).toEqual(transaction)
      expect((await client.getBlock({ blockNumber: before.blockNumber })).hash).toBe(before.blockHash)
      expect(await client.getCode({ address: chain.contract })).toBe(documentAnchorsDeployedBytecode)
      const logs = await client.getLogs({ address: chain.contract, fromBlock: 0n })
      expect(parseEventLogs({ abi: documentAnchorsAbi, logs }).map((log) => log.eventName)).toEqual([
        'OwnershipTransferred',
        'RelayerAdded',
        'DocumentAnchored',
      ])
    } finally {
      await anvil.stop()
    }
  })

  it('falls back to the last good state when the file was damaged mid-write', async () => {
    const stateFile = join(dir, 'damaged.json')
    const chain = await startTestChain({ anvil: { stateFile } })
    const contract = chain.contract
    await chain.stop()
    // The second start keeps a copy of the good file; the damage stands for a crash in the middle of a dump.
    await (await startAnvil({ stateFile })).stop()
    const good = await readFile(stateFile, 'utf8')
    await writeFile(stateFile, good.slice(0, good.length / 2))

    const logged: string[] = []
    const anvil = await startAnvil({ stateFile, log: (line) => logged.push(line) })
    try {
      expect(logged[0]).toMatch(/damaged\.json is damaged; restoring .*damaged\.json\.bak/)
      expect(await clientFor(anvil.rpcUrl).getCode({ address: contract })).toBe(documentAnchorsDeployedBytecode)
    } finally {
      await anvil.stop()
    }
  })

  it('refuses to start on a damaged state file without a usable backup', async () => {
    const stateFile = join(dir, 'lost.json')
    await writeFile(stateFile, '{"block":')
    await expect(startAnvil({ stateFile })).rejects.toThrow(/lost\.json is damaged and there is no usable/)
  })
})
