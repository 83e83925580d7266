// The DocumentAnchored event as a transaction receipt holds it: what a verifier reads from the chain itself, with no
// service to trust. Plain string and BigInt work, so any JSON-RPC client's receipt (viem's, ethers', a raw
// `eth_getTransactionReceipt` answer with its block number as a bigint) can be read with it.

type Hex = `0x${string}`

/**
 * topic0 of `DocumentAnchored(bytes32 indexed compositeHash, bytes32 indexed previousTxHash, address indexed signer,
 * uint256 timestamp)`: keccak-256 of that signature (the service's tests compare it with the compiled contract's ABI),
 * how its logs are found, and a constant the contract's code carries (PUSH32).
 */
export const DOCUMENT_ANCHORED_TOPIC: Hex = '0xc1eb1e191002c8618d4db005abdf1bf79d1572370c2d61e9cd4576d94ec81aec'

/** One anchor as the chain records it, with where it sits on chain (finality and the order of successors need it);
 * every hex value lower-case. */
export interface AnchoredEvent {
  txHash: Hex
  compositeHash: Hex
  /** The relayer that sent the transaction (the event's `signer`). */
  signer: Hex
  /** The block's Unix time in seconds, as the event records it. */
  timestamp: number
  previousTxHash: Hex
  blockNumber: bigint
  transactionIndex: number
}

/** What anchorFromReceipt reads of a transaction receipt. */
export interface ReceiptLike {
  transactionHash: string
  blockNumber: bigint
  transactionIndex: number
  status: 'success' | 'reverted'
  logs: readonly { address: string; topics: readonly string[]; data: string }[]
}

/**
 * The anchor a receipt records, or undefined when the transaction holds no DocumentAnchored log emitted by
 * `contract`. The address check is the whole point: any contract can emit an event with the same signature.
 */
export function anchorFromReceipt(receipt: ReceiptLike, contract: string): AnchoredEvent | undefined {
  if (receipt.status !== 'success') return undefined
  const ours = contract.toLowerCase()
  for (const log of receipt.logs) {
    if (log.address.toLowerCase() !== ours || log.topics[0] !== DOCUMENT_ANCHORED_TOPIC) continue
    const event = decodeDocumentAnchored(log)
    if (event === undefined) continue
    return {
      txHash: receipt.transactionHash.toLowerCase() as Hex,
      ...event,
      blockNumber: receipt.blockNumber,
      transactionIndex: receipt.transactionIndex,
    }
  }
  return undefined
}

/**
 * Three indexed words and one data word, read by position. A verify reads as many events as its chain is deep, and
 * viem's general ABI decoder (bytes, a cursor, a checksummed address per event) cost a verify of a depth-50 chain
 * about as much as its JSON-RPC round trip. undefined when the log is not shaped like the event.
 */
function decodeDocumentAnchored(
  log: ReceiptLike['logs'][number],
): Pick<AnchoredEvent, 'compositeHash' | 'previousTxHash' | 'signer' | 'timestamp'> | undefined {
  const [, compositeHash, previousTxHash, signer] = log.topics
  if (log.topics.length !== 4 || !isWord(compositeHash) || !isWord(previousTxHash) || !isWord(signer)) return undefined
  if (!isWord(log.data) || !signer.startsWith(ADDRESS_PADDING)) return undefined
  return {
    compositeHash: compositeHash.toLowerCase() as Hex,
    previousTxHash: previousTxHash.toLowerCase() as Hex,
    signer: `0x${signer.slice(ADDRESS_PADDING.length).toLowerCase()}`,
    timestamp: Number(BigInt(log.data)),
  }
}

const WORD = /^0x[0-9a-fA-F]{64}$/
/** An address in a 32-byte word: 12 zero bytes, then its 20. */
const ADDRESS_PADDING = `0x${'0'.repeat(24)}`

function isWord(value: string | undefined): value is Hex {
  return value !== undefined && WORD.test(value)
}
