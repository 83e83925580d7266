// Reads a DocumentAnchored event out of a transaction receipt, trusting only logs of the configured contract.

import { ZERO_TX_HASH } from '@docanchor/client'
import { type Address, decodeEventLog, type Hash, type Log, toEventSelector } from 'viem'
import { documentAnchorsAbi } from '../chain/document-anchors-artifact.ts'

export const ZERO_HASH = ZERO_TX_HASH as Hash

const DOCUMENT_ANCHORED = toEventSelector(
  documentAnchorsAbi.find((item) => item.type === 'event' && item.name === 'DocumentAnchored')!,
)

/** One anchor as verifiers see it; every hex value lower-case. */
export interface ChainEntry {
  txHash: Hash
  compositeHash: Hash
  /** The relayer that sent the transaction (the event's `signer`). */
  signer: Address
  /** The block's Unix time in seconds, as the event records it. */
  timestamp: number
  previousTxHash: Hash
}

/** A chain entry with where it sits on chain: finality and the order of successors need it. */
export interface AnchorRecord extends ChainEntry {
  blockNumber: bigint
  transactionIndex: number
}

export interface ReceiptLike {
  transactionHash: Hash
  blockNumber: bigint
  transactionIndex: number
  status: 'success' | 'reverted'
  logs: readonly Pick<Log, 'address' | 'topics' | 'data'>[]
}

/**
 * The anchor a receipt records, or undefined when the transaction holds no DocumentAnchored log emitted by
 * `contract`. The address check is the whole point: any contract can emit an event with the same signature.
 */
export function anchorFromReceipt(receipt: ReceiptLike, contract: Address): AnchorRecord | undefined {
  if (receipt.status !== 'success') return undefined
  const ours = contract.toLowerCase()
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== ours || log.topics[0] !== DOCUMENT_ANCHORED) continue
    const { args } = decodeEventLog({
      abi: documentAnchorsAbi,
      eventName: 'DocumentAnchored',
      topics: log.topics as [Hash, ...Hash[]],
      data: log.data,
    })
    return {
      txHash: receipt.transactionHash.toLowerCase() as Hash,
      compositeHash: args.compositeHash.toLowerCase() as Hash,
      signer: args.signer.toLowerCase() as Address,
      timestamp: Number(args.timestamp),
      previousTxHash: args.previousTxHash.toLowerCase() as Hash,
      blockNumber: receipt.blockNumber,
      transactionIndex: receipt.transactionIndex,
    }
  }
  return undefined
}

export function toChainEntry(record: AnchorRecord): ChainEntry {
  return {
    txHash: record.txHash,
    compositeHash: record.compositeHash,
    signer: record.signer,
    timestamp: record.timestamp,
    previousTxHash: record.previousTxHash,
  }
}
