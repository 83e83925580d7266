import { describe, expect, it } from 'vitest'
import { base64UrlLength, fromBase64Url, toBase64Url } from '../../src/formats/base64url.ts'
import { FormatError, InvalidBase64UrlError } from '../../src/formats/errors.ts'

const ascii = (text: string) => new TextEncoder().encode(text)

// RFC 4648 §10 test vectors, without padding.
const RFC_4648 = [
  ['', ''],
  ['f', 'Zg'],
  ['fo', 'Zm8'],
  ['foo', 'Zm9v'],
  ['foob', 'Zm9vYg'],
  ['fooba', 'Zm9vYmE'],
  ['foobar', 'Zm9vYmFy'],
] as const

describe('toBase64Url', () => {
  it.each(RFC_4648)('encodes %j as %j', (plain, encoded) => {
    expect(toBase64Url(ascii(plain))).toBe(encoded)
  })

  it('uses - and _ instead of + and /', () => {
    expect(toBase64Url(new Uint8Array([0xfb, 0xff, 0xbf]))).toBe('-_-_')
  })

  it('never pads', () => {
    expect(toBase64Url(new Uint8Array(16))).toBe('AAAAAAAAAAAAAAAAAAAAAA')
  })
})

describe('base64UrlLength', () => {
  it.each([
    [0, 0],
    [1, 2],
    [2, 3],
    [3, 4],
    [16, 22],
    [32, 43],
  ])('gives %i bytes %i characters', (bytes, chars) => {
    expect(base64UrlLength(bytes)).toBe(chars)
  })
})

describe('fromBase64Url', () => {
  it.each(RFC_4648)('decodes %j from %j', (plain, encoded) => {
    expect(fromBase64Url(encoded)).toEqual(ascii(plain))
  })

  it('decodes - and _', () => {
    expect(fromBase64Url('-_-_')).toEqual(new Uint8Array([0xfb, 0xff, 0xbf]))
  })

  it.each([
    ['Zg==', 'f'],
    ['Zm8=', 'fo'],
    ['Zm9v', 'foo'],
  ])('tolerates correct padding: %s', (encoded, plain) => {
    expect(fromBase64Url(encoded)).toEqual(ascii(plain))
  })

  it.each(['Zg=', 'Zg===', 'Zm8==', 'Zm9v=', 'Zm9v====', '=', '=='])('rejects incorrect padding: %j', (encoded) => {
    expect(() => fromBase64Url(encoded)).toThrow('base64url: incorrect padding')
  })

  it.each(['Z=g=', 'Zm=9v'])('rejects padding inside the text: %j', (encoded) => {
    expect(() => fromBase64Url(encoded)).toThrow(InvalidBase64UrlError)
  })

  it.each([
    ['+', 'Zm+v'],
    ['/', 'Zm/v'],
    ['a space', 'Zm 9v'],
    ['a newline', 'Zm9v\n'],
    ['a tab', '\tZm9v'],
    ['a non-ASCII letter', 'Zm9é'],
    ['a dot', 'Zm.v'],
  ])('rejects %s', (_, encoded) => {
    expect(() => fromBase64Url(encoded)).toThrow(/^base64url: invalid character at position \d+$/)
  })

  it('says where the bad character is without echoing it', () => {
    expect(() => fromBase64Url('AAA+', 'key')).toThrow('key: invalid character at position 3')
  })

  it.each(['A', 'AAAAA', 'AAAAAAAAA'])('rejects the impossible length of %j', (encoded) => {
    expect(() => fromBase64Url(encoded)).toThrow(/impossible length/)
  })

  it.each([
    ['Zh', 'Zg'],
    ['Zm9', 'Zm8'],
    ['AB', 'AA'],
  ])('rejects non-canonical %j (canonical is %j)', (bad, good) => {
    expect(toBase64Url(fromBase64Url(good))).toBe(good)
    expect(() => fromBase64Url(bad)).toThrow('base64url: non-canonical encoding (unused trailing bits are not zero)')
  })

  it('throws an InvalidBase64UrlError with a stable code, named after the field', () => {
    try {
      fromBase64Url('A', 'ciphertext')
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidBase64UrlError)
      expect(error).toBeInstanceOf(FormatError)
      expect((error as FormatError).code).toBe('ERR_INVALID_BASE64URL')
      expect((error as FormatError).name).toBe('InvalidBase64UrlError')
      expect((error as Error).message).toBe('ciphertext: impossible length 1')
    }
  })
})
