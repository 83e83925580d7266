// Fetches the anchors of many transactions in one batched JSON-RPC round trip, remembering the final ones for good.
import { type AnchoredEvent, anchorFromReceipt, type ReceiptLike } from '@docanchor/client'
import { LRUCache } from 'lru-cache'
import { type Address, type Hash, type Hex, hexToBigInt, hexToNumber, type RpcTransactionReceipt } from 'viem'
import type { ChainClient } from '../chain/chain-client.ts'
import { ChainUnavailableError } from '../chain/chain-errors.ts'

export interface AnchorReaderOptions {
  client: ChainClient
  contract: Address
  /** Blocks on top of a receipt's block before it counts as final and is never fetched again. */
  finalityDepth: number
  finalCacheMaxEntries: number
}

/**
 * What a transaction holds: its anchor, `null` when it exists but is not an anchor of our contract (a plain
 * transfer, another contract's look-alike event, a reverted call) or does not exist at all.
 */
export type AnchorLookup = AnchoredEvent | null

export class AnchorReader {
  readonly #options: AnchorReaderOptions
  // `false`: a final transaction that is not an anchor. Only final answers are kept: they can no longer change.
  readonly #final: LRUCache<string, AnchoredEvent | false>

  constructor(options: AnchorReaderOptions) {
    this.#options = options
    this.#final = new LRUCache({ max: options.finalCacheMaxEntries })
  }

  /**
   * Looks up every hash (lower-case) at once: the ones not known to be final go into ONE JSON-RPC batch, together
   * with the block number that decides their finality. Rejects with ChainUnavailableError.
   */
  async read(hashes: readonly Hash[]): Promise<Map<Hash, AnchorLookup>> {
    const result = new Map<Hash, AnchorLookup>()
    const missing: Hash[] = []
    for (const hash of hashes) {
      if (result.has(hash)) continue
      const known = this.#final.get(hash)
      if (known === undefined) {
        if (!missing.includes(hash)) missing.push(hash)
      } else {
        result.set(hash, known || null)
      }
    }
    if (missing.length === 0) return result

    const { client, contract, finalityDepth } = this.#options
    let head: bigint
    let receipts: (RpcTransactionReceipt | null)[]
    try {
      // Sent now rather than behind viem's batch timer (json-rpc-batch.ts says why).
      const [blockNumber, ...results] = await client.requestBatch([
        { method: 'eth_blockNumber', params: [] },
        ...missing.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })),
      ])
      head = hexToBigInt(blockNumber as Hex)
      receipts = results as (RpcTransactionReceipt | null)[]
    } catch (error) {
      throw new ChainUnavailableError('The blockchain could not be reached; try again later', { cause: error })
    }
    for (const [i, hash] of missing.entries()) {
      // null: no such transaction (or not mined yet).
      const rpcReceipt = receipts[i]
      if (!rpcReceipt) {
        result.set(hash, null)
        continue
      }
      const receipt = receiptFromRpc(rpcReceipt)
      const anchor = anchorFromReceipt(receipt, contract) ?? null
      result.set(hash, anchor)
      if (receipt.blockNumber + BigInt(finalityDepth) <= head) this.#final.set(hash, anchor ?? false)
    }
    return result
  }
}

/**
 * The fields an anchor is read from, converted from the node's hex; viem's formatter converts every field of the
 * receipt and of each log, which a depth-50 chain pays fifty times.
 */
function receiptFromRpc(receipt: RpcTransactionReceipt): ReceiptLike {
  return {
    transactionHash: receipt.transactionHash,
    blockNumber: hexToBigInt(receipt.blockNumber),
    transactionIndex: hexToNumber(receipt.transactionIndex),
    // Post-Byzantium receipts carry a status: 0x1 for success.
    status: receipt.status === '0x1' ? 'success' : 'reverted',
    logs: receipt.logs,
  }
}
