// Anchors chains directly on the test chain (account 0 is owner and relayer) and indexes them the way the relay does.
import { randomBytes } from 'node:crypto'
import { ZERO_TX_HASH } from '@docanchor/client'
import { type Address, type Hash, parseEther } from 'viem'
import { documentAnchorsAbi } from '../../../src/chain/document-anchors-artifact.ts'
import type { Database } from '../../../src/db/database.ts'
import type { anchors } from '../../../src/db/schema.ts'
import type { AttestedEntry } from '../../../src/verify/chain-walker.ts'
import type { TestChain } from '../../helpers/chain/anvil.ts'
import { indexAnchor } from '../../helpers/chain/indexed-anchor.ts'

export interface TestAnchor {
  txHash: Hash
  compositeHash: Hash
  previousTxHash: Hash
  nonce: number
}

export function randomHash(): Hash {
  return `0x${randomBytes(32).toString('hex')}`
}

/** Sends `anchor` calls one after another, each naming the previous; returns them first to last, once all are mined. */
export async function anchorChain(
  testChain: TestChain,
  depth: number,
  options: { contract?: Address; previousTxHash?: Hash } = {},
): Promise<TestAnchor[]> {
  const wallet = testChain.walletClient(0)
  let nonce = await testChain.publicClient.getTransactionCount({ address: wallet.account.address, blockTag: 'pending' })
  let previousTxHash = options.previousTxHash ?? ZERO_TX_HASH
  const anchored: TestAnchor[] = []
  for (let i = 0; i < depth; i++) {
    const compositeHash = randomHash()
    // The hash is known at submission: automine needs no wait before the next link names it.
    const txHash = await wallet.writeContract({
      address: options.contract ?? testChain.contract,
      abi: documentAnchorsAbi,
      functionName: 'anchor',
      args: [compositeHash, previousTxHash],
      nonce,
      gas: 100_000n,
    })
    anchored.push({ txHash, compositeHash, previousTxHash, nonce })
    previousTxHash = txHash
    nonce++
  }
  const last = anchored.at(-1)
  if (last) await testChain.publicClient.waitForTransactionReceipt({ hash: last.txHash })
  return anchored
}

export async function sendPlainTransfer(testChain: TestChain): Promise<Hash> {
  const wallet = testChain.walletClient(0)
  const hash = await wallet.sendTransaction({ to: testChain.account(5).address, value: parseEther('0.001') })
  await testChain.publicClient.waitForTransactionReceipt({ hash })
  return hash
}

/** Inserts the rows the relay would have written; `payload` per anchor defaults to a fake ciphertext. */
export async function indexAnchors(
  db: Database,
  testChain: TestChain,
  anchored: readonly TestAnchor[],
  overrides: (anchor: TestAnchor) => Partial<typeof anchors.$inferInsert> = () => ({}),
): Promise<void> {
  for (const anchor of anchored) {
    await indexAnchor(db, {
      txHash: anchor.txHash,
      compositeHash: anchor.compositeHash,
      previousTxHash: anchor.previousTxHash,
      encryptedPayload: payloadOf(anchor),
      status: 'confirmed' as const,
      chainId: testChain.chain.id,
      relayerAddress: testChain.account(0).address.toLowerCase(),
      nonce: anchor.nonce,
      ...overrides(anchor),
    })
  }
}

/** A recognisable fake ciphertext per anchor, so a test can tell whose payload came back. */
export function payloadOf(anchor: TestAnchor): string {
  return `payload-${anchor.txHash.slice(2, 18)}_-AZ`
}

/**
 * The chain ending at `txHash`, first to last, read independently through eth_getLogs of our contract; these anchors
 * are indexed without attestation (as a relay without salt stores them).
 */
export async function chainFromLogs(testChain: TestChain, txHash: Hash): Promise<AttestedEntry[]> {
  const logs = await testChain.publicClient.getContractEvents({
    address: testChain.contract,
    abi: documentAnchorsAbi,
    eventName: 'DocumentAnchored',
    fromBlock: 0n,
    strict: true,
  })
  const byTx = new Map<string, AttestedEntry>()
  for (const log of logs) {
    byTx.set(log.transactionHash, {
      txHash: log.transactionHash,
      compositeHash: log.args.compositeHash,
      signer: log.args.signer.toLowerCase() as Address,
      timestamp: Number(log.args.timestamp),
      previousTxHash: log.args.previousTxHash,
      attestation: null,
    })
  }
  const chain: AttestedEntry[] = []
  let current = byTx.get(txHash)
  while (current) {
    chain.unshift(current)
    current = current.previousTxHash === ZERO_TX_HASH ? undefined : byTx.get(current.previousTxHash)
  }
  return chain
}
