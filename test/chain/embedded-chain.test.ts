import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, createWalletClient, http, keccak256, stringToHex, zeroHash } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { isRelayer } from '../../src/chain/deploy-document-anchors.ts'
import { documentAnchorsAbi, documentAnchorsDeployedBytecode } from '../../src/chain/document-anchors-artifact.ts'
import { startEmbeddedChain } from '../../src/chain/embedded-chain.ts'
import { LOCAL_POLLING_INTERVAL_MS } from '../helpers/chain/anvil.ts'

let dataDir: string

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'embedded-chain-'))
})

afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true })
})

describe('startEmbeddedChain', () => {
  it('deploys on the first start and finds the same contract and earlier anchors on the next', async () => {
    const first = await startEmbeddedChain({ dataDir })
    let anchorHash: `0x${string}`
    try {
      expect(first.deployed).toBe(true)
      expect(first.chainId).toBe(31337)
      const transport = http(first.rpcUrl)
      const publicClient = createPublicClient({ transport, pollingInterval: LOCAL_POLLING_INTERVAL_MS })
      const relayer = privateKeyToAccount(first.relayerPrivateKeys[0]!)
      expect(await isRelayer(publicClient, { contract: first.contractAddress, relayer: relayer.address })).toBe(true)
      const walletClient = createWalletClient({ account: relayer, transport })
      anchorHash = await walletClient.writeContract({
        address: first.contractAddress,
        abi: documentAnchorsAbi,
        functionName: 'anchor',
        args: [keccak256(stringToHex('embedded')), zeroHash],
        chain: null,
      })
      expect((await publicClient.waitForTransactionReceipt({ hash: anchorHash })).status).toBe('success')
    } finally {
      await first.stop()
    }

    const second = await startEmbeddedChain({ dataDir })
    try {
      expect(second.deployed).toBe(false)
      expect(second.contractAddress).toBe(first.contractAddress)
      expect(second.relayerPrivateKeys).toEqual(first.relayerPrivateKeys)
      const publicClient = createPublicClient({ transport: http(second.rpcUrl) })
      expect(await publicClient.getCode({ address: second.contractAddress })).toBe(documentAnchorsDeployedBytecode)
      expect((await publicClient.getTransactionReceipt({ hash: anchorHash })).status).toBe('success')
    } finally {
      await second.stop()
    }
  })

  it('refuses to start when the recorded contract is gone from the chain state', async () => {
    const lostDir = await mkdtemp(join(tmpdir(), 'embedded-chain-lost-'))
    try {
      await (await startEmbeddedChain({ dataDir: lostDir })).stop()
      await rm(join(lostDir, 'chain', 'anvil-state.json'))
      await expect(startEmbeddedChain({ dataDir: lostDir })).rejects.toThrow(/its state was lost/)
    } finally {
      await rm(lostDir, { recursive: true, force: true })
    }
  })
})
