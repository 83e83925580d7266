import { describe, expect, it } from 'vitest'
import { toBase64Url } from '../../src/formats/base64url.ts'
import { InvalidHexError, InvalidQrUrlError } from '../../src/formats/errors.ts'
import { buildQrUrl, parseQrUrl, txHashFromBase64Url, txHashToBase64Url } from '../../src/formats/qr-url.ts'

const TX = '0x6caa42726e5f6731f962f65016846411fc98ef1a24dc2aa43ad2f14b0bd4bd25'
const TX_B64 = 'bKpCcm5fZzH5YvZQFoRkEfyY7xok3CqkOtLxSwvUvSU'
const KEY_B64 = 'R6R04VY8tdZe80bH1TuY9A'
const KEY = new Uint8Array([
  0x47, 0xa4, 0x74, 0xe1, 0x56, 0x3c, 0xb5, 0xd6, 0x5e, 0xf3, 0x46, 0xc7, 0xd5, 0x3b, 0x98, 0xf4,
])
const URL_ = `https://verify.example.com/v/${TX_B64}#${KEY_B64}`

function qrError(action: () => unknown): InvalidQrUrlError {
  try {
    action()
  } catch (error) {
    if (error instanceof InvalidQrUrlError) return error
    throw error
  }
  throw new Error('no error')
}

describe('txHashToBase64Url', () => {
  it('encodes the 32 bytes in 43 characters', () => {
    expect(txHashToBase64Url(TX)).toBe(TX_B64)
  })

  it('reads upper-case hex the same', () => {
    expect(txHashToBase64Url(`0x${TX.slice(2).toUpperCase()}`)).toBe(TX_B64)
  })

  it.each([
    ['no 0x prefix', TX.slice(2)],
    ['63 hex digits', TX.slice(0, -1)],
    ['a non-hex digit', `${TX.slice(0, -1)}g`],
  ])('rejects a hash with %s', (_, tx) => {
    expect(() => txHashToBase64Url(tx)).toThrow(InvalidHexError)
    expect(() => txHashToBase64Url(tx)).toThrow('txHash: must be 0x followed by 64 hex characters')
  })
})

describe('txHashFromBase64Url', () => {
  it('decodes to lowercase 0x hex', () => {
    expect(txHashFromBase64Url(TX_B64)).toBe(TX)
  })

  it.each([
    [42, TX_B64.slice(0, -1)],
    [44, `${TX_B64}A`],
  ])('rejects %i characters', (length, encoded) => {
    expect(() => txHashFromBase64Url(encoded)).toThrow(
      `transaction hash: must be 43 base64url characters, got ${length}`,
    )
  })

  it('rejects a character outside base64url', () => {
    expect(() => txHashFromBase64Url(`+${TX_B64.slice(1)}`)).toThrow(
      'transaction hash: invalid character at position 0',
    )
  })

  it('rejects a non-canonical last character', () => {
    // 43 characters carry 258 bits for 256: the last character's two low bits must be zero ('U' = 20, 'V' = 21).
    expect(() => txHashFromBase64Url(`${TX_B64.slice(0, -1)}V`)).toThrow(InvalidQrUrlError)
  })
})

describe('buildQrUrl', () => {
  it('builds {base}/v/{tx}#{key}', () => {
    expect(buildQrUrl({ verifyBaseUrl: 'https://verify.example.com', txHash: TX, key: KEY })).toBe(URL_)
  })

  it('keeps a path prefix and drops trailing slashes', () => {
    expect(buildQrUrl({ verifyBaseUrl: 'https://example.com/anchors//', txHash: TX, key: KEY })).toBe(
      `https://example.com/anchors/v/${TX_B64}#${KEY_B64}`,
    )
  })

  it('is about 96 characters with the reference 27-character base', () => {
    const url = buildQrUrl({ verifyBaseUrl: 'https://verify.example.co.uk', txHash: TX, key: KEY })
    expect(url).toHaveLength(28 + 3 + 43 + 1 + 22)
  })

  it.each([
    ['a relative URL', '/verify', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['another scheme', 'ftp://example.com', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['a javascript: URL', 'javascript:alert(1)', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['a space', 'https://exa mple.com', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['a backslash', 'https://example.com\\x', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['no host', 'https://', 'verifyBaseUrl: must be an absolute http or https URL'],
    ['a query', 'https://example.com/?a=1', 'verifyBaseUrl: must not have a query or a fragment'],
    ['a fragment', 'https://example.com/#x', 'verifyBaseUrl: must not have a query or a fragment'],
  ])('rejects a base URL with %s', (_, verifyBaseUrl, message) => {
    expect(qrError(() => buildQrUrl({ verifyBaseUrl, txHash: TX, key: KEY })).message).toBe(message)
  })

  it('rejects a malformed transaction hash', () => {
    expect(
      qrError(() => buildQrUrl({ verifyBaseUrl: 'https://a.example', txHash: TX.slice(2), key: KEY })).message,
    ).toBe('txHash: must be 0x followed by 64 hex characters')
  })

  it.each([15, 17, 32])('rejects a %i-byte key', (length) => {
    const error = qrError(() =>
      buildQrUrl({ verifyBaseUrl: 'https://a.example', txHash: TX, key: new Uint8Array(length) }),
    )
    expect(error.message).toBe('key: must be 16 bytes')
    expect(error.code).toBe('ERR_INVALID_QR_URL')
  })
})

describe('parseQrUrl', () => {
  it('gives back the base URL, the 0x transaction hash and the key bytes', () => {
    expect(parseQrUrl(URL_)).toEqual({ verifyBaseUrl: 'https://verify.example.com', txHash: TX, key: KEY })
  })

  it('keeps a path prefix in the base URL', () => {
    expect(parseQrUrl(`http://localhost:8080/app/v/${TX_B64}#${KEY_B64}`).verifyBaseUrl).toBe(
      'http://localhost:8080/app',
    )
  })

  it('rebuilds the same URL', () => {
    expect(buildQrUrl(parseQrUrl(URL_))).toBe(URL_)
  })

  it.each([
    ['no fragment', `https://verify.example.com/v/${TX_B64}`, 'qrUrl: missing the #key fragment'],
    [
      'another path',
      `https://verify.example.com/x/${TX_B64}#${KEY_B64}`,
      'qrUrl: path must end in /v/<transaction hash>',
    ],
    [
      'a path after the hash',
      `https://verify.example.com/v/${TX_B64}/x#${KEY_B64}`,
      'qrUrl: path must end in /v/<transaction hash>',
    ],
    [
      'a 42-character hash',
      `https://verify.example.com/v/${TX_B64.slice(1)}#${KEY_B64}`,
      'transaction hash: must be 43 base64url characters, got 42',
    ],
    [
      'a query',
      `https://verify.example.com/v/${TX_B64}?utm=1#${KEY_B64}`,
      'transaction hash: must be 43 base64url characters, got 49',
    ],
    [
      'a query in the base',
      `https://verify.example.com/?a/v/${TX_B64}#${KEY_B64}`,
      'verifyBaseUrl: must not have a query or a fragment',
    ],
    [
      'a 21-character key',
      `https://verify.example.com/v/${TX_B64}#${KEY_B64.slice(1)}`,
      'key: must be 22 base64url characters, got 21',
    ],
    [
      'a 23-character key',
      `https://verify.example.com/v/${TX_B64}#${KEY_B64}A`,
      'key: must be 22 base64url characters, got 23',
    ],
    [
      'a padded key',
      `https://verify.example.com/v/${TX_B64}#${KEY_B64}==`,
      'key: must be 22 base64url characters, got 24',
    ],
    [
      'a + in the key',
      `https://verify.example.com/v/${TX_B64}#+${KEY_B64.slice(1)}`,
      'key: invalid character at position 0',
    ],
    [
      'a / in the hash',
      `https://verify.example.com/v/${TX_B64.slice(0, -1)}/#${KEY_B64}`,
      'qrUrl: path must end in /v/<transaction hash>',
    ],
    [
      'a non-canonical key',
      `https://verify.example.com/v/${TX_B64}#${KEY_B64.slice(0, -1)}B`,
      'key: non-canonical encoding (unused trailing bits are not zero)',
    ],
    [
      'a double slash',
      `https://verify.example.com//v/${TX_B64}#${KEY_B64}`,
      'verifyBaseUrl: must not end with a slash',
    ],
    ['a non-http scheme', `file:///tmp/v/${TX_B64}#${KEY_B64}`, 'verifyBaseUrl: must be an absolute http or https URL'],
    ['no base', `/v/${TX_B64}#${KEY_B64}`, 'verifyBaseUrl: must be an absolute http or https URL'],
  ])('rejects a URL with %s', (_, url, message) => {
    expect(qrError(() => parseQrUrl(url)).message).toBe(message)
  })

  it('decodes the key exactly', () => {
    expect(toBase64Url(parseQrUrl(URL_).key)).toBe(KEY_B64)
  })
})
