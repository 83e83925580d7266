// From the address in the browser to a verdict: which transaction, which key, what the service and the chain say,
// and whether the decrypted signer details hash to what the chain holds. No DOM here, so the logic is testable alone.
import {
  type AnchorPayload,
  compositeHash,
  compositeHashesEqual,
  decideIdentity,
  decryptPayload,
  fromBase64Url,
  type IdentityDecision,
  PAYLOAD_KEY_BYTES,
  parseAnchorPayload,
  txHashFromBase64Url,
} from '@docanchor/client'
import type { ApiClient, UnavailableReason } from './api-client.ts'
import { chainLinksUp, type VerifyRecord } from './verify-record.ts'

const HEX_TX_HASH = /^0x[0-9a-fA-F]{64}$/

export type Verdict =
  /** The decrypted details hash to the composite hash on chain; `identity` says whether the service attests who. */
  | { kind: 'verified'; record: VerifyRecord; payload: AnchorPayload; identity: IdentityDecision }
  /** The details decrypt but do not hash to the chain's value, or the service's chain does not link up. */
  | { kind: 'tampered'; record: VerifyRecord; reason: 'hash-mismatch' | 'broken-chain' }
  /** The key does not open the stored details: a wrong key and an altered ciphertext look the same to AES-GCM. */
  | { kind: 'key-mismatch'; record: VerifyRecord }
  /** No key in the link, or one that is not 22 base64url characters. */
  | { kind: 'missing-key'; record: VerifyRecord; malformed: boolean }
  /** Anchored on chain, but the service holds no encrypted details for it. */
  | { kind: 'no-details'; record: VerifyRecord }
  | { kind: 'erased'; record: VerifyRecord }
  /** The details match the chain but are not a payload this page can read. */
  | { kind: 'unreadable'; record: VerifyRecord }
  | { kind: 'invalid-link' }
  | { kind: 'not-found'; txHash: string }
  | { kind: 'unavailable'; reason: UnavailableReason; retryAfterSeconds?: number }

export interface LinkParts {
  /** Lower-case `0x` hex, or undefined when the path holds no transaction hash. */
  txHash: string | undefined
  /** Undefined when the fragment is empty; null when it is there but not a 16-byte key. */
  key: Uint8Array | null | undefined
}

/** Reads `/…/v/<43 base64url chars or 0x hex>` and `#<22 base64url chars>`. */
export function parseLink(pathname: string, fragment: string): LinkParts {
  const id = /\/v\/([^/]+)$/.exec(pathname)?.[1]
  return { txHash: id === undefined ? undefined : parseTxHash(id), key: parseKey(fragment.replace(/^#/, '')) }
}

function parseTxHash(id: string): string | undefined {
  if (HEX_TX_HASH.test(id)) return id.toLowerCase()
  try {
    return txHashFromBase64Url(id)
  } catch {
    return undefined
  }
}

function parseKey(text: string): Uint8Array | null | undefined {
  if (text === '') return undefined
  try {
    const key = fromBase64Url(text, 'key')
    return key.length === PAYLOAD_KEY_BYTES ? key : null
  } catch {
    return null
  }
}

/** The whole check: fetch, check the chain links up, decrypt, hash, compare, parse. */
export async function verifyLink(link: LinkParts, api: ApiClient): Promise<Verdict> {
  if (link.txHash === undefined) return { kind: 'invalid-link' }
  const answer = await api.verify(link.txHash)
  switch (answer.kind) {
    case 'not-found':
      return { kind: 'not-found', txHash: link.txHash }
    case 'invalid-id':
      return { kind: 'invalid-link' }
    case 'unavailable':
      return answer
  }
  const { record } = answer
  if (!chainLinksUp(record, link.txHash)) return { kind: 'tampered', record, reason: 'broken-chain' }
  if (record.encryptedPayload === null) return { kind: record.payloadErased ? 'erased' : 'no-details', record }
  if (!link.key) return { kind: 'missing-key', record, malformed: link.key === null }

  let plaintext: string
  try {
    plaintext = await decryptPayload(record.encryptedPayload, link.key)
  } catch {
    return { kind: 'key-mismatch', record }
  }
  // The decrypted text is hashed as it is, not re-serialized: the check covers exactly the anchored bytes.
  if (!compositeHashesEqual(await compositeHash(plaintext), record.compositeHash)) {
    return { kind: 'tampered', record, reason: 'hash-mismatch' }
  }
  let payload: AnchorPayload
  try {
    payload = parseAnchorPayload(plaintext)
  } catch {
    return { kind: 'unreadable', record }
  }
  return { kind: 'verified', record, payload, identity: await decideIdentity(payload, record.attestation) }
}
