// Real signatures for the page to verify: payloads built, hashed and encrypted with @docanchor/client, anchored on the
// test chain by account 0 (a relayer) and indexed the way the relay indexes them.

import {
  type AnchorPayload,
  type AnchorPayloadInput,
  buildAnchorPayload,
  buildQrUrl,
  compositeHash,
  encryptPayload,
  generatePayloadKey,
  type IdentityAttestation,
  identityCommitment,
  serializeAnchorPayload,
  validateAnchorPayload,
  ZERO_TX_HASH,
} from '@docanchor/client'
import { eq } from 'drizzle-orm'
import type { Hash } from 'viem'
import { documentAnchorsAbi } from '../../../src/chain/document-anchors-artifact.ts'
import type { Database } from '../../../src/db/database.ts'
import { anchors } from '../../../src/db/schema.ts'
import type { TestChain } from '../../helpers/chain/anvil.ts'
import { indexAnchor } from '../../helpers/chain/indexed-anchor.ts'

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
  /**
   * Relay it as this account would with the payload's salt: the service's attestation of that account, whatever the
   * payload says. Left out, the anchor carries no attestation (a relay without salt).
   */
  relayedBy?: { email: string; trust: IdentityAttestation['trust']; verified: boolean }
  /**
   * A payload as an older client wrote it, read back leniently: text a new payload refuses (control characters,
   * bidirectional overrides) is anchored as it is. Replaces the payload built from `input`.
   */
  legacyPayload?: AnchorPayload
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
  options: { index?: boolean; attestation?: IdentityAttestation } = {},
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
    await indexAnchor(db, {
      txHash,
      compositeHash: request.compositeHash,
      previousTxHash: request.previousTxHash,
      encryptedPayload: request.encryptedPayload,
      status: 'confirmed',
      chainId: testChain.chain.id,
      relayerAddress: testChain.account(0).address.toLowerCase(),
      nonce: transaction.nonce,
      blockNumber: Number(receipt.blockNumber),
      identityCommitment: options.attestation?.identityCommitment,
      attestedTrust: options.attestation?.trust,
      attestedVerified: options.attestation?.verified,
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
  const payload = options.legacyPayload ? validateAnchorPayload(options.legacyPayload) : buildAnchorPayload(input)
  const serialized = options.legacyPayload ? JSON.stringify(payload) : serializeAnchorPayload(payload)
  const hash = (await compositeHash(serialized)) as Hash
  const key = generatePayloadKey()
  const encryptedPayload = await encryptPayload(serialized, key)
  const previousTxHash = options.previousTxHash ?? (ZERO_TX_HASH as Hash)
  const { txHash, blockTimestamp } = await anchorRequest(
    testChain,
    db,
    { compositeHash: hash, previousTxHash, encryptedPayload },
    {
      index: options.index ?? true,
      attestation: options.relayedBy && {
        trust: options.relayedBy.trust,
        verified: options.relayedBy.verified,
        identityCommitment: await identityCommitment(options.relayedBy.email, payload.salt),
      },
    },
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

/** Erases the stored ciphertext and attestation as deleting the signer's account does (src/accounts/delete-account.ts). */
export async function eraseStoredPayload(db: Database, txHash: Hash): Promise<void> {
  await db
    .update(anchors)
    .set({
      encryptedPayload: null,
      identityCommitment: null,
      attestedTrust: null,
      attestedVerified: null,
      payloadErasedAt: new Date(),
    })
    .where(eq(anchors.txHash, txHash))
}
