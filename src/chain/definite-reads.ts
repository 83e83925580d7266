// Reads that tell "the node says there is none" apart from "the node could not be asked": only the first is evidence
// (of a dropped transaction, a reorg, a consumed nonce); the second rejects, and the caller asks again later.
import {
  type Block,
  BlockNotFoundError,
  type Hash,
  type Transaction,
  TransactionNotFoundError,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { ChainClient } from './chain-client.ts'

/** The receipt, or null when the node has none; rejects when the node could not be asked. */
export async function receiptOrNull(client: ChainClient, hash: Hash): Promise<TransactionReceipt | null> {
  try {
    return await client.getTransactionReceipt({ hash })
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) return null
    throw error
  }
}

/** The transaction (pooled or mined), or null when the node does not know it; rejects when it could not be asked. */
export async function transactionOrNull(client: ChainClient, hash: Hash): Promise<Transaction | null> {
  try {
    return await client.getTransaction({ hash })
  } catch (error) {
    if (error instanceof TransactionNotFoundError) return null
    throw error
  }
}

/** The block, or null when the node has no block at that height; rejects when it could not be asked. */
export async function blockOrNull(client: ChainClient, blockNumber: bigint): Promise<Block | null> {
  try {
    return await client.getBlock({ blockNumber })
  } catch (error) {
    if (error instanceof BlockNotFoundError) return null
    throw error
  }
}
