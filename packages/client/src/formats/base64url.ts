// Strict base64url (RFC 4648 §5) without padding: the encoding of ciphertexts, keys and transaction hashes in
// QR URLs. Strict because two spellings of the same bytes would let the same QR code be written two ways.

import { InvalidBase64UrlError } from './errors.ts'

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'

const DECODE_TABLE: Int8Array = (() => {
  const table = new Int8Array(128).fill(-1)
  for (let i = 0; i < ALPHABET.length; i++) table[ALPHABET.charCodeAt(i)] = i
  return table
})()

const PAD = 0x3d // '='

/** Encodes bytes as base64url without padding. */
export function toBase64Url(bytes: Uint8Array): string {
  let out = ''
  let i = 0
  for (; i + 3 <= bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!
  }
  const rest = bytes.length - i
  if (rest === 1) {
    const n = bytes[i]! << 16
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]!
  } else if (rest === 2) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8)
    out += ALPHABET[(n >> 18) & 63]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]!
  }
  return out
}

/** Length of the unpadded base64url text for `byteLength` bytes. */
export function base64UrlLength(byteLength: number): number {
  return Math.ceil((byteLength * 4) / 3)
}

/**
 * Decodes base64url. Rejects the standard alphabet (`+`, `/`), whitespace, lengths no byte string can have,
 * non-zero unused trailing bits and wrong padding; correct `=` padding is tolerated because some encoders add it.
 * `label` names the field in error messages.
 */
export function fromBase64Url(text: string, label = 'base64url'): Uint8Array<ArrayBuffer> {
  let end = text.length
  while (end > 0 && text.charCodeAt(end - 1) === PAD) end--
  const padding = text.length - end
  if (padding !== 0 && padding !== (4 - (end % 4)) % 4) {
    throw new InvalidBase64UrlError(`${label}: incorrect padding`)
  }

  const out = new Uint8Array(Math.floor((end * 3) / 4))
  let buffer = 0
  let bits = 0
  let o = 0
  for (let i = 0; i < end; i++) {
    const code = text.charCodeAt(i)
    const value = code < 128 ? DECODE_TABLE[code]! : -1
    // The character itself is not echoed: the text may be a key.
    if (value < 0) throw new InvalidBase64UrlError(`${label}: invalid character at position ${i}`)
    buffer = ((buffer << 6) | value) & 0xffffff
    bits += 6
    if (bits >= 8) {
      bits -= 8
      out[o++] = (buffer >> bits) & 0xff
    }
  }
  // After the characters, so a stray space is reported as such rather than as a bad length.
  if (end % 4 === 1) {
    throw new InvalidBase64UrlError(`${label}: impossible length ${end}`)
  }
  if ((buffer & ((1 << bits) - 1)) !== 0) {
    throw new InvalidBase64UrlError(`${label}: non-canonical encoding (unused trailing bits are not zero)`)
  }
  return out
}
