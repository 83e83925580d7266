// The QR URL `{verifyBaseUrl}/v/<base64url(32-byte tx hash)>#<base64url(16-byte key)>`: the transaction hash in the
// path tells the verification page what to fetch, the key in the fragment never leaves the browser.

import { fromBase64Url, toBase64Url } from './base64url.ts'
import { FormatError, InvalidHexError, InvalidQrUrlError } from './errors.ts'
import { fromHex, toHex } from './hex.ts'
import { PAYLOAD_KEY_BYTES } from './payload-cipher.ts'

const TX_HASH = /^0x[0-9a-fA-F]{64}$/
const TX_HASH_CHARS = 43
const KEY_CHARS = 22
const BASE_URL_START = /^https?:\/\//i

export interface QrUrlParts {
  /** Scheme, host and optional path prefix, without a trailing slash, e.g. `https://verify.example.com`. */
  verifyBaseUrl: string
  /** `0x` + 64 hex characters; parsing gives lowercase. */
  txHash: string
  /** The 16-byte payload key. */
  key: Uint8Array
}

/** The 43-character base64url form of a `0x` hex transaction hash. */
export function txHashToBase64Url(txHash: string): string {
  if (!TX_HASH.test(txHash)) throw new InvalidHexError('txHash: must be 0x followed by 64 hex characters')
  return toBase64Url(fromHex(txHash.slice(2), 'txHash'))
}

/** The `0x` lowercase hex transaction hash of its 43-character base64url form. */
export function txHashFromBase64Url(encoded: string): string {
  if (encoded.length !== TX_HASH_CHARS) {
    throw new InvalidQrUrlError(
      `transaction hash: must be ${TX_HASH_CHARS} base64url characters, got ${encoded.length}`,
    )
  }
  return `0x${toHex(decode(encoded, 'transaction hash'))}`
}

function decode(encoded: string, label: string): Uint8Array {
  try {
    return fromBase64Url(encoded, label)
  } catch (error) {
    throw error instanceof FormatError ? new InvalidQrUrlError(error.message) : error
  }
}

function checkBaseUrl(base: string): void {
  // Whitespace and backslashes are refused because `URL` would quietly repair them into another address.
  if (!BASE_URL_START.test(base) || /[\s\\]/.test(base)) {
    throw new InvalidQrUrlError('verifyBaseUrl: must be an absolute http or https URL')
  }
  let url: URL
  try {
    url = new URL(base)
  } catch {
    throw new InvalidQrUrlError('verifyBaseUrl: must be an absolute http or https URL')
  }
  if (url.search !== '' || url.hash !== '' || base.includes('?') || base.includes('#')) {
    throw new InvalidQrUrlError('verifyBaseUrl: must not have a query or a fragment')
  }
}

/** Builds the QR URL; a trailing slash on the base URL is dropped so the path never reads `//v/`. */
export function buildQrUrl(parts: QrUrlParts): string {
  const base = parts.verifyBaseUrl.replace(/\/+$/, '')
  checkBaseUrl(base)
  if (!TX_HASH.test(parts.txHash)) throw new InvalidQrUrlError('txHash: must be 0x followed by 64 hex characters')
  if (!(parts.key instanceof Uint8Array) || parts.key.length !== PAYLOAD_KEY_BYTES) {
    throw new InvalidQrUrlError(`key: must be ${PAYLOAD_KEY_BYTES} bytes`)
  }
  return `${base}/v/${txHashToBase64Url(parts.txHash)}#${toBase64Url(parts.key)}`
}

/**
 * Parses a QR URL strictly: exactly 43 and 22 canonical base64url characters, no query, no trailing slash on the
 * base, so that `buildQrUrl(parseQrUrl(url)) === url`.
 */
export function parseQrUrl(url: string): QrUrlParts {
  const hash = url.indexOf('#')
  if (hash < 0) throw new InvalidQrUrlError('qrUrl: missing the #key fragment')
  const match = /^(.*)\/v\/([^/]*)$/s.exec(url.slice(0, hash))
  if (!match) throw new InvalidQrUrlError('qrUrl: path must end in /v/<transaction hash>')
  const verifyBaseUrl = match[1]!
  if (verifyBaseUrl.endsWith('/')) throw new InvalidQrUrlError('verifyBaseUrl: must not end with a slash')
  checkBaseUrl(verifyBaseUrl)
  const txHash = txHashFromBase64Url(match[2]!)
  const fragment = url.slice(hash + 1)
  if (fragment.length !== KEY_CHARS) {
    throw new InvalidQrUrlError(`key: must be ${KEY_CHARS} base64url characters, got ${fragment.length}`)
  }
  return { verifyBaseUrl, txHash, key: decode(fragment, 'key') }
}
