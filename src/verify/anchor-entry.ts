// Reads a DocumentAnchored event out of a transaction receipt, trusting only logs of the configured contract.
import type { Address, Hash, Hex, Log } from 'viem'
import { DOCUMENT_ANCHORED_TOPIC } from '../chain/document-anchored-event.ts'

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
    if (log.address.toLowerCase() !== ours || log.topics[0] !== DOCUMENT_ANCHORED_TOPIC) continue
    const event = decodeDocumentAnchored(log)
    if (event === undefined) continue
    return {
      txHash: receipt.transactionHash.toLowerCase() as Hash,
      ...event,
      blockNumber: receipt.blockNumber,
      transactionIndex: receipt.transactionIndex,
    }
  }
  return undefined
}

/**
 * `DocumentAnchored(bytes32 indexed compositeHash, bytes32 indexed previousTxHash, address indexed signer,
 * uint256 timestamp)`: three indexed words and one data word, read by position. A verify reads as many events as its
 * chain is deep, and viem's general ABI decoder (bytes, a cursor, a checksummed address per event) cost a verify of
 * a depth-50 chain about as much as its JSON-RPC round trip. undefined when the log is not shaped like the event.
 */
function decodeDocumentAnchored(
  log: Pick<Log, 'topics' | 'data'>,
): Pick<AnchorRecord, 'compositeHash' | 'previousTxHash' | 'signer' | 'timestamp'> | undefined {
  const [, compositeHash, previousTxHash, signer] = log.topics
  if (log.topics.length !== 4 || !isWord(compositeHash) || !isWord(previousTxHash) || !isWord(signer)) return undefined
  if (!isWord(log.data) || !signer.startsWith(ADDRESS_PADDING)) return undefined
  return {
    compositeHash: compositeHash.toLowerCase() as Hash,
    previousTxHash: previousTxHash.toLowerCase() as Hash,
    signer: `0x${signer.slice(ADDRESS_PADDING.length).toLowerCase()}` as Address,
    timestamp: Number(BigInt(log.data)),
  }
}

const WORD = /^0x[0-9a-fA-F]{64}$/
/** An address in a 32-byte word: 12 zero bytes, then its 20. */
const ADDRESS_PADDING = `0x${'0'.repeat(24)}`

function isWord(value: string | undefined): value is Hex {
  return value !== undefined && WORD.test(value)
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
