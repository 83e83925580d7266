// Field checks of library items that a plain schema cannot express: a base64 PNG judged without decoding it whole,
// text PostgreSQL stores exactly as sent, strict millisecond UTC timestamps. Each returns a message or undefined.

/** Contract limits of item content (../shared/API.md, Library): client and server share them, so not configurable. */
export const LABEL_MAX_CHARACTERS = 200
export const SNIPPET_TEXT_MAX_CHARACTERS = 4_000
export const FONT_SIZE_MIN = 4
export const FONT_SIZE_MAX = 144

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
// 12 base64 characters carry 9 bytes: the 8-byte signature needs no more.
const SIGNATURE_PREFIX_CHARACTERS = 12
const BASE64 = /^[A-Za-z0-9+/]*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'

/** Bytes that `length` characters of padded base64 ending in `padding` `=` signs decode to. */
export function base64DecodedLength(length: number, padding: number): number {
  return (length / 4) * 3 - padding
}

/**
 * Standard padded base64 (RFC 4648 §4) of a PNG of at most `maxBytes`. Strict (no whitespace, no `data:` prefix,
 * no base64url, zero unused trailing bits) so that one image has one spelling. The size comes from the length and
 * the magic bytes from a 12-character prefix: the image itself is never decoded.
 */
export function checkBase64Png(text: string, maxBytes: number): string | undefined {
  if (text.length === 0) return 'must not be empty'
  if (text.length % 4 !== 0) return 'must be standard base64 with padding'
  const padding = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0
  const size = base64DecodedLength(text.length, padding)
  // Checked before the alphabet so that an oversized string is never scanned.
  if (size > maxBytes) return `decodes to ${size} bytes; at most ${maxBytes} allowed`
  if (!BASE64.test(text)) return 'must be standard base64 (A-Z, a-z, 0-9, +, /, = padding)'
  if (padding > 0) {
    const last = ALPHABET.indexOf(text.charAt(text.length - padding - 1))
    // One padding sign leaves 2 unused bits, two leave 4: RFC 4648 canonical encoders write them as zero.
    if ((last & (padding === 1 ? 0b11 : 0b1111)) !== 0) return 'is not canonical base64 (non-zero trailing bits)'
  }
  const prefix = Buffer.from(text.slice(0, SIGNATURE_PREFIX_CHARACTERS), 'base64')
  if (prefix.length < PNG_SIGNATURE.length || PNG_SIGNATURE.some((byte, i) => prefix[i] !== byte)) {
    return 'is not a PNG image (missing PNG signature)'
  }
  return undefined
}

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * Text stored byte for byte: PostgreSQL `text` cannot hold U+0000, and a lone surrogate would be silently replaced
 * by U+FFFD on the way to UTF-8. Length counts Unicode characters (code points), not UTF-16 units.
 */
export function checkText(text: string, maxCharacters: number): string | undefined {
  if (LONE_SURROGATE.test(text)) return 'contains an unpaired surrogate'
  if (text.includes('\u0000')) return 'must not contain U+0000'
  // A string of n UTF-16 units holds at most n code points: only long strings need counting.
  if (text.length > maxCharacters && countCodePoints(text, maxCharacters) > maxCharacters) {
    return `must be at most ${maxCharacters} characters`
  }
  return undefined
}

/** Counts code points, stopping once past `stopAfter`. */
function countCodePoints(text: string, stopAfter: number): number {
  let count = 0
  for (const _ of text) {
    count += 1
    if (count > stopAfter) break
  }
  return count
}

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/
/** No library item predates the Unix epoch; earlier years (0000 above all) are not even all storable in PostgreSQL. */
export const EARLIEST_TIMESTAMP = '1970-01-01T00:00:00.000Z'
const EARLIEST_INSTANT = Date.parse(EARLIEST_TIMESTAMP)

/**
 * An ISO 8601 UTC timestamp with milliseconds, `2024-05-01T12:00:00.000Z`, naming a real instant (no 30 February)
 * not before 1970, and at most `maxFutureMs` past `now`: a client clock far ahead would otherwise win every later conflict.
 * Returns the instant in epoch milliseconds, or a message.
 */
export function parseClientTimestamp(text: string, now: number, maxFutureMs: number): number | string {
  if (!TIMESTAMP.test(text)) return 'must be an ISO 8601 UTC timestamp with milliseconds (YYYY-MM-DDTHH:mm:ss.sssZ)'
  const instant = Date.parse(text)
  if (Number.isNaN(instant) || new Date(instant).toISOString() !== text) return 'is not a valid date and time'
  if (instant < EARLIEST_INSTANT) return `lies before ${EARLIEST_TIMESTAMP}`
  if (instant > now + maxFutureMs) return `lies more than ${maxFutureMs} ms in the future of the server's clock`
  return instant
}
