// Real signatures for the page to verify: payloads built, hashed and encrypted with src/formats, anchored on the
// test chain by account 0 (a relayer) and indexed the way the relay indexes them.
import { eq } from 'drizzle-orm'
import type { Hash } from 'viem'
import { documentAnchorsAbi } from '../../../src/chain/document-anchors-artifact.ts'
import type { Database } from '../../../src/db/database.ts'
import { anchors } from '../../../src/db/schema.ts'
import {
  type AnchorPayload,
  type AnchorPayloadInput,
  buildAnchorPayload,
  serializeAnchorPayload,
} from '../../../src/formats/anchor-payload.ts'
import { compositeHash } from '../../../src/formats/composite-hash.ts'
import { encryptPayload, generatePayloadKey } from '../../../src/formats/payload-cipher.ts'
import { buildQrUrl } from '../../../src/formats/qr-url.ts'
import type { TestChain } from '../../helpers/anvil.ts'

export const ZERO_HASH = `0x${'0'.repeat(64)}` as Hash

export interface Signature {
  txHash: Hash
  previousTxHash: Hash
  compositeHash: Hash
  payload: AnchorPayload
  key: Uint8Array
  encryptedPayload: string
  /** Block time of the anchoring transaction. */
  blockTimestamp: number
  qrUrl(verifyBaseUrl: string, key?: Uint8Array): string
}

export interface SignOptions {
  previousTxHash?: Hash
  /** Leave the anchor unindexed, as if this service never held its payload. */
  index?: boolean
}

export interface AnchorRequest {
  compositeHash: string
  previousTxHash: string
  encryptedPayload: string
}

export interface Anchored {
  txHash: Hash
  blockTimestamp: number
}

/** What the relay does for a request: send the anchor transaction, wait for it, and index it (unless told not to). */
export async function anchorRequest(
  testChain: TestChain,
  db: Database,
  request: AnchorRequest,
  options: { index?: boolean } = {},
): Promise<Anchored> {
  const wallet = testChain.walletClient(0)
  const txHash = await wallet.writeContract({
    address: testChain.contract,
    abi: documentAnchorsAbi,
    functionName: 'anchor',
    args: [request.compositeHash as Hash, request.previousTxHash as Hash],
    gas: 100_000n,
  })
  const receipt = await testChain.publicClient.waitForTransactionReceipt({ hash: txHash })
  const [transaction, block] = await Promise.all([
    testChain.publicClient.getTransaction({ hash: txHash }),
    testChain.publicClient.getBlock({ blockNumber: receipt.blockNumber }),
  ])
  if (options.index ?? true) {
    await db.insert(anchors).values({
      txHash,
      compositeHash: request.compositeHash,
      previousTxHash: request.previousTxHash,
      encryptedPayload: request.encryptedPayload,
      status: 'confirmed',
      chainId: testChain.chain.id,
      relayerAddress: testChain.account(0).address.toLowerCase(),
      nonce: transaction.nonce,
      blockNumber: Number(receipt.blockNumber),
    })
  }
  return { txHash, blockTimestamp: Number(block.timestamp) }
}

export async function sign(
  testChain: TestChain,
  db: Database,
  input: AnchorPayloadInput,
  options: SignOptions = {},
): Promise<Signature> {
  const payload = buildAnchorPayload(input)
  const serialized = serializeAnchorPayload(payload)
  const hash = (await compositeHash(serialized)) as Hash
  const key = generatePayloadKey()
  const encryptedPayload = await encryptPayload(serialized, key)
  const previousTxHash = options.previousTxHash ?? ZERO_HASH
  const { txHash, blockTimestamp } = await anchorRequest(
    testChain,
    db,
    { compositeHash: hash, previousTxHash, encryptedPayload },
    { index: options.index ?? true },
  )
  return {
    txHash,
    previousTxHash,
    compositeHash: hash,
    payload,
    key,
    encryptedPayload,
    blockTimestamp,
    qrUrl: (verifyBaseUrl, otherKey = key) => buildQrUrl({ verifyBaseUrl, txHash, key: otherKey }),
  }
}

/** Replaces the stored ciphertext of an anchor, as an attacker with write access to the database could. */
export async function replaceStoredPayload(db: Database, txHash: Hash, encryptedPayload: string): Promise<void> {
  await db.update(anchors).set({ encryptedPayload }).where(eq(anchors.txHash, txHash))
}
