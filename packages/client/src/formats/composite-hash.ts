// The composite hash: `0x` + SHA-256 hex of the serialized payload's bytes, the only value written on chain.

import { type AnchorPayload, serializeAnchorPayload } from './anchor-payload.ts'
import { toHex } from './hex.ts'

const COMPOSITE_HASH = /^0x[0-9a-fA-F]{64}$/

/**
 * Hashes serialized payload text (UTF-8) or raw bytes. A verifier hashes the decrypted text as it is rather than
 * re-serializing it, so the check covers exactly the bytes that were anchored.
 */
export async function compositeHash(serialized: string | Uint8Array): Promise<string> {
  const bytes = typeof serialized === 'string' ? new TextEncoder().encode(serialized) : new Uint8Array(serialized)
  return `0x${toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes)))}`
}

/** Composite hash of a payload's canonical serialization. */
export function hashAnchorPayload(payload: AnchorPayload): Promise<string> {
  return compositeHash(serializeAnchorPayload(payload))
}

/** True for `0x` followed by 64 hex digits of either case. */
export function isCompositeHash(value: unknown): value is string {
  return typeof value === 'string' && COMPOSITE_HASH.test(value)
}

/** Case-insensitive equality, as clients may write hex in either case; false when either side is malformed. */
export function compositeHashesEqual(a: string, b: string): boolean {
  return isCompositeHash(a) && isCompositeHash(b) && a.toLowerCase() === b.toLowerCase()
}
