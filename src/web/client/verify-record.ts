// The shape of GET /api/verify/:txHash as this page relies on it, checked by hand rather than trusted: the page
// renders nothing the service sends unless it has this shape, and it checks that the chain links up.

import { type IdentityAttestation, LOWER_HEX_HASH, parseIdentityAttestation, ZERO_TX_HASH } from '@docanchor/client'

const ADDRESS = /^0x[0-9a-f]{40}$/
const BASE64URL = /^[A-Za-z0-9_-]+={0,2}$/

export interface ChainEntry {
  txHash: string
  compositeHash: string
  /** The relayer that sent the transaction, not the person who signed. */
  signer: string
  /** Block time, Unix seconds. */
  timestamp: number
  previousTxHash: string
  /** What the service attests about the account that relayed it; null for none (or a service that predates them). */
  attestation: IdentityAttestation | null
}

export interface VerifyRecord extends ChainEntry {
  /** First signature of the document to this one, inclusive. */
  chain: ChainEntry[]
  encryptedPayload: string | null
  /** The service erased the ciphertext at the signer's request (their account was deleted). */
  payloadErased: boolean
  successors: ChainEntry[]
  /** Further anchors naming this one, not listed: the page asks for them on request. */
  moreSuccessors: number
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function toEntry(value: unknown): ChainEntry | undefined {
  if (!isRecord(value)) return undefined
  const { txHash, compositeHash, signer, timestamp, previousTxHash } = value
  const attestation = parseIdentityAttestation(value.attestation)
  if (
    attestation === undefined ||
    typeof txHash !== 'string' ||
    !LOWER_HEX_HASH.test(txHash) ||
    typeof compositeHash !== 'string' ||
    !LOWER_HEX_HASH.test(compositeHash) ||
    typeof signer !== 'string' ||
    !ADDRESS.test(signer) ||
    typeof timestamp !== 'number' ||
    !Number.isSafeInteger(timestamp) ||
    timestamp < 0 ||
    typeof previousTxHash !== 'string' ||
    !LOWER_HEX_HASH.test(previousTxHash)
  ) {
    return undefined
  }
  return { txHash, compositeHash, signer, timestamp, previousTxHash, attestation }
}

function toEntries(value: unknown): ChainEntry[] | undefined {
  if (!Array.isArray(value)) return undefined
  const entries: ChainEntry[] = []
  for (const item of value) {
    const entry = toEntry(item)
    if (!entry) return undefined
    entries.push(entry)
  }
  return entries
}

/** The record when `value` has the documented shape, else undefined. */
export function parseVerifyRecord(value: unknown): VerifyRecord | undefined {
  if (!isRecord(value)) return undefined
  const head = toEntry(value)
  const chain = toEntries(value.chain)
  const successors = toEntries(value.successors ?? [])
  const { encryptedPayload } = value
  if (!head || !chain || !successors) return undefined
  if (encryptedPayload !== null && (typeof encryptedPayload !== 'string' || !BASE64URL.test(encryptedPayload))) {
    return undefined
  }
  // A service that predates erasure does not say: it never erased anything.
  const payloadErased = value.payloadErased === true && encryptedPayload === null
  // A service that predates the count lists every successor it knows.
  const moreSuccessors =
    typeof value.moreSuccessors === 'number' && Number.isSafeInteger(value.moreSuccessors) && value.moreSuccessors > 0
      ? value.moreSuccessors
      : 0
  return { ...head, chain, encryptedPayload, payloadErased, successors, moreSuccessors }
}

/** A page of further successors (`GET /api/verify/:txHash/successors`), when `value` has its shape. */
export function parseSuccessorPage(
  value: unknown,
): { successors: ChainEntry[]; nextOffset: number | null } | undefined {
  if (!isRecord(value)) return undefined
  const successors = toEntries(value.successors)
  const { nextOffset } = value
  if (!successors || (nextOffset !== null && !(typeof nextOffset === 'number' && Number.isSafeInteger(nextOffset)))) {
    return undefined
  }
  return { successors, nextOffset }
}

/**
 * True when the chain runs from a first signature (previous = zero hash) to the requested anchor, each entry
 * naming the one before, and every successor names the requested anchor. A service that splices chains fails here.
 */
export function chainLinksUp(record: VerifyRecord, requestedTxHash: string): boolean {
  const { chain, successors } = record
  const last = chain.at(-1)
  if (!last || chain[0]?.previousTxHash !== ZERO_TX_HASH) return false
  if (record.txHash !== requestedTxHash || last.txHash !== requestedTxHash) return false
  if (
    last.compositeHash !== record.compositeHash ||
    last.previousTxHash !== record.previousTxHash ||
    last.timestamp !== record.timestamp ||
    last.signer !== record.signer
  ) {
    return false
  }
  for (let i = 1; i < chain.length; i++) {
    if (chain[i]!.previousTxHash !== chain[i - 1]!.txHash) return false
  }
  return successors.every((entry) => entry.previousTxHash === requestedTxHash)
}
