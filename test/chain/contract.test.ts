import {
  type Address,
  BaseError,
  ContractFunctionRevertedError,
  type Hash,
  keccak256,
  parseEventLogs,
  stringToHex,
  type TransactionReceipt,
  zeroAddress,
  zeroHash,
} from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { addRelayer, deployDocumentAnchors, isRelayer, removeRelayer } from '../../src/chain/deploy-document-anchors.ts'
import { documentAnchorsAbi } from '../../src/chain/document-anchors-artifact.ts'
import { startTestChain, type TestChain } from '../helpers/chain/anvil.ts'

let chain: TestChain

beforeAll(async () => {
  chain = await startTestChain()
})

afterAll(async () => {
  await chain?.stop()
})

const documentHash = (label: string): Hash => keccak256(stringToHex(label))

/** Sends anchor() as account `signer`, skipping simulation so a revert is mined and visible on chain. */
async function sendAnchor(
  signer: number,
  compositeHash: Hash,
  previousTxHash: Hash,
  contract: Address = chain.contract,
): Promise<TransactionReceipt> {
  const hash = await chain.walletClient(signer).writeContract({
    address: contract,
    abi: documentAnchorsAbi,
    functionName: 'anchor',
    args: [compositeHash, previousTxHash],
    gas: 100_000n,
  })
  return chain.publicClient.waitForTransactionReceipt({ hash })
}

/** The custom error a call reverts with, as decoded by viem from the contract's ABI. */
async function revertOf(call: Promise<unknown>): Promise<{ errorName?: string; args?: readonly unknown[] }> {
  try {
    await call
  } catch (error) {
    const revert = error instanceof BaseError && error.walk((cause) => cause instanceof ContractFunctionRevertedError)
    if (revert instanceof ContractFunctionRevertedError)
      return { errorName: revert.data?.errorName, args: revert.data?.args }
    throw error
  }
  throw new Error('expected the call to revert')
}

function simulateAnchor(signer: number, contract: Address = chain.contract) {
  return chain.publicClient.simulateContract({
    address: contract,
    abi: documentAnchorsAbi,
    functionName: 'anchor',
    args: [documentHash('unauthorized'), zeroHash],
    account: chain.account(signer),
  })
}

describe('DocumentAnchors.anchor', () => {
  it('emits DocumentAnchored with the hash, the previous tx hash, the relayer as signer and the block time', async () => {
    const first = await sendAnchor(0, documentHash('doc v1'), zeroHash)
    const second = await sendAnchor(0, documentHash('doc v2'), first.transactionHash)

    for (const [receipt, compositeHash, previousTxHash] of [
      [first, documentHash('doc v1'), zeroHash],
      [second, documentHash('doc v2'), first.transactionHash],
    ] as const) {
      expect(receipt.status).toBe('success')
      const events = parseEventLogs({ abi: documentAnchorsAbi, logs: receipt.logs })
      expect(events).toHaveLength(1)
      const [event] = events
      const block = await chain.publicClient.getBlock({ blockNumber: receipt.blockNumber })
      expect(event?.eventName).toBe('DocumentAnchored')
      expect(event?.address).toBe(chain.contract.toLowerCase())
      expect(event?.args).toEqual({
        compositeHash,
        previousTxHash,
        signer: chain.account(0).address,
        timestamp: block.timestamp,
      })
    }
  })

  it('reverts with NotRelayer(caller) for an address that was never authorized', async () => {
    const stranger = chain.account(2).address
    expect(await revertOf(simulateAnchor(2))).toEqual({ errorName: 'NotRelayer', args: [stranger] })
    const receipt = await sendAnchor(2, documentHash('unauthorized'), zeroHash)
    expect(receipt.status).toBe('reverted')
    expect(receipt.logs).toEqual([])
  })

  it('costs a bounded amount of gas per anchor', async () => {
    // Each anchor is its own transaction, so the relayer check is always a cold storage read; only the calldata
    // differs: a first anchor's zero previousTxHash is 32 zero bytes, which are cheaper than non-zero ones.
    const first = await sendAnchor(0, documentHash('gas v1'), zeroHash)
    const next = await sendAnchor(0, documentHash('gas v2'), first.transactionHash)
    console.log(`gas per anchor: first (zero previousTxHash) ${first.gasUsed}, subsequent ${next.gasUsed}`)
    for (const gas of [first.gasUsed, next.gasUsed]) {
      expect(gas).toBeGreaterThan(21_000n)
      expect(gas).toBeLessThan(28_000n)
    }
    expect(next.gasUsed).toBeGreaterThan(first.gasUsed)
  })
})

describe('DocumentAnchors relayers', () => {
  it('lets the owner authorize a relayer, which can then anchor, and revoke it, after which it cannot', async () => {
    const relayer = chain.account(3).address
    const wallet = chain.walletClient(0)
    const params = { contract: chain.contract, relayer }
    expect(await isRelayer(chain.publicClient, params)).toBe(false)

    const added = await chain.publicClient.getTransactionReceipt({
      hash: await addRelayer(wallet, chain.publicClient, params),
    })
    expect(parseEventLogs({ abi: documentAnchorsAbi, logs: added.logs })).toMatchObject([
      { eventName: 'RelayerAdded', args: { relayer } },
    ])
    expect(await isRelayer(chain.publicClient, params)).toBe(true)
    const anchored = await sendAnchor(3, documentHash('by relayer 3'), zeroHash)
    expect(anchored.status).toBe('success')
    expect(parseEventLogs({ abi: documentAnchorsAbi, logs: anchored.logs })[0]?.args).toMatchObject({
      signer: relayer,
    })

    const removed = await chain.publicClient.getTransactionReceipt({
      hash: await removeRelayer(wallet, chain.publicClient, params),
    })
    expect(parseEventLogs({ abi: documentAnchorsAbi, logs: removed.logs })).toMatchObject([
      { eventName: 'RelayerRemoved', args: { relayer } },
    ])
    expect(await isRelayer(chain.publicClient, params)).toBe(false)
    expect(await revertOf(simulateAnchor(3))).toEqual({ errorName: 'NotRelayer', args: [relayer] })
    expect((await sendAnchor(3, documentHash('revoked'), zeroHash)).status).toBe('reverted')
  })

  it('refuses relayer changes from anyone but the owner', async () => {
    const intruder = chain.walletClient(1)
    const params = { contract: chain.contract, relayer: chain.account(1).address }
    const notOwner = { errorName: 'NotOwner', args: [chain.account(1).address] }
    expect(await revertOf(addRelayer(intruder, chain.publicClient, params))).toEqual(notOwner)
    expect(
      await revertOf(removeRelayer(intruder, chain.publicClient, { ...params, relayer: chain.account(0).address })),
    ).toEqual(notOwner)
    expect(await isRelayer(chain.publicClient, params)).toBe(false)
    expect(await isRelayer(chain.publicClient, { ...params, relayer: chain.account(0).address })).toBe(true)
  })

  it('refuses the zero address as a relayer', async () => {
    const params = { contract: chain.contract, relayer: zeroAddress }
    expect(await revertOf(addRelayer(chain.walletClient(0), chain.publicClient, params))).toMatchObject({
      errorName: 'ZeroAddress',
    })
  })

  it('deploys with the given relayers authorized and the deployer as owner', async () => {
    const relayers = [chain.account(4).address, chain.account(5).address]
    const contract = await deployDocumentAnchors(chain.walletClient(0), chain.publicClient, { relayers })
    for (const relayer of relayers) expect(await isRelayer(chain.publicClient, { contract, relayer })).toBe(true)
    expect(await isRelayer(chain.publicClient, { contract, relayer: chain.account(0).address })).toBe(false)
    const owner = await chain.publicClient.readContract({
      address: contract,
      abi: documentAnchorsAbi,
      functionName: 'owner',
    })
    expect(owner).toBe(chain.account(0).address)
  })
})

describe('DocumentAnchors ownership', () => {
  it('moves ownership only once the new owner accepts it', async () => {
    const contract = await deployDocumentAnchors(chain.walletClient(0), chain.publicClient)
    const read = (functionName: 'owner' | 'pendingOwner') =>
      chain.publicClient.readContract({ address: contract, abi: documentAnchorsAbi, functionName })
    const mined = (hash: Hash) => chain.publicClient.waitForTransactionReceipt({ hash })
    const transfer = async (signer: number, newOwner: Address) => {
      const { request } = await chain.publicClient.simulateContract({
        address: contract,
        abi: documentAnchorsAbi,
        functionName: 'transferOwnership',
        args: [newOwner],
        account: chain.account(signer),
      })
      return mined(await chain.walletClient(signer).writeContract(request))
    }
    const accept = async (signer: number) => {
      const { request } = await chain.publicClient.simulateContract({
        address: contract,
        abi: documentAnchorsAbi,
        functionName: 'acceptOwnership',
        account: chain.account(signer),
      })
      return mined(await chain.walletClient(signer).writeContract(request))
    }
    const [owner, next, stranger] = [chain.account(0).address, chain.account(6).address, chain.account(7).address]

    expect(await revertOf(transfer(6, next))).toEqual({ errorName: 'NotOwner', args: [next] })
    await transfer(0, next)
    expect(await read('owner')).toBe(owner)
    expect(await read('pendingOwner')).toBe(next)
    expect(await revertOf(accept(7))).toEqual({ errorName: 'NotPendingOwner', args: [stranger] })

    const accepted = await accept(6)
    expect(
      parseEventLogs({ abi: documentAnchorsAbi, logs: accepted.logs, eventName: 'OwnershipTransferred' }),
    ).toMatchObject([{ args: { previousOwner: owner, newOwner: next } }])
    expect(await read('owner')).toBe(next)
    expect(await read('pendingOwner')).toBe(zeroAddress)
    const params = { contract, relayer: owner }
    expect(await revertOf(addRelayer(chain.walletClient(0), chain.publicClient, params))).toEqual({
      errorName: 'NotOwner',
      args: [owner],
    })
    await addRelayer(chain.walletClient(6), chain.publicClient, params)
    expect(await isRelayer(chain.publicClient, params)).toBe(true)
  })
})
