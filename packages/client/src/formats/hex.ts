// Hex text <-> bytes for document hashes, salts, composite hashes and transaction hashes.

import { InvalidHexError } from './errors.ts'

const HEX_PATTERN = /^(?:[0-9a-fA-F]{2})*$/

/** A 32-byte hash (SHA-256, a transaction hash) as the service and this client write one: `0x` and lower-case hex. */
export const LOWER_HEX_HASH = /^0x[0-9a-f]{64}$/

/** Lowercase hex of `bytes`, without a `0x` prefix. */
export function toHex(bytes: Uint8Array): string {
  let out = ''
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0')
  return out
}

/** True when `value` is hex text (either case, no `0x`) of exactly `length` characters, when given. */
export function isHex(value: unknown, length?: number): value is string {
  if (typeof value !== 'string' || !HEX_PATTERN.test(value)) return false
  return length === undefined || value.length === length
}

/** Decodes hex text without a `0x` prefix; `label` names the field in error messages. */
export function fromHex(text: string, label = 'hex'): Uint8Array<ArrayBuffer> {
  if (!HEX_PATTERN.test(text)) {
    throw new InvalidHexError(`${label}: not an even-length string of hex digits`)
  }
  const out = new Uint8Array(text.length / 2)
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(text.slice(2 * i, 2 * i + 2), 16)
  return out
}
