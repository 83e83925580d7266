// The two spellings of a transaction hash a verifier may send: `0x` hex in any case, or the QR URL's base64url.

import { txHashFromBase64Url } from '@docanchor/client'
import type { Hash } from 'viem'

const HEX_TX_HASH = /^0x[0-9a-fA-F]{64}$/
const BASE64URL_TX_HASH = /^[A-Za-z0-9_-]{43}$/

/** Lower-case `0x` hex, or undefined when `value` is neither form (a non-canonical base64url tail included). */
export function parseTxHashParam(value: string): Hash | undefined {
  if (HEX_TX_HASH.test(value)) return value.toLowerCase() as Hash
  if (!BASE64URL_TX_HASH.test(value)) return undefined
  try {
    return txHashFromBase64Url(value) as Hash
  } catch {
    return undefined
  }
}
