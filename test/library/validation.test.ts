import { describe, expect, it } from 'vitest'
import { checkBase64Png, checkText, parseClientTimestamp } from '../../src/library/validation.ts'
import { PNG_SIGNATURE, pngBase64 } from './fixtures.ts'

describe('checkBase64Png', () => {
  it('accepts standard base64 of PNG bytes with or without padding', () => {
    for (const size of [8, 9, 10, 11, 300]) expect(checkBase64Png(pngBase64(size), 1024)).toBeUndefined()
  })

  it('accepts exactly the size limit and refuses one byte more, judged from the length', () => {
    expect(checkBase64Png(pngBase64(1024), 1024)).toBeUndefined()
    expect(checkBase64Png(pngBase64(1025), 1024)).toBe('decodes to 1025 bytes; at most 1024 allowed')
  })

  it('refuses bytes that are not a PNG', () => {
    expect(checkBase64Png(Buffer.from('GIF89a-not-a-png').toString('base64'), 1024)).toMatch(/not a PNG/)
    expect(checkBase64Png(PNG_SIGNATURE.subarray(0, 7).toString('base64'), 1024)).toMatch(/not a PNG/)
  })

  it('refuses base64url, whitespace, data URLs, missing padding and non-canonical trailing bits', () => {
    const valid = Buffer.concat([PNG_SIGNATURE, Buffer.from([0xfb, 0xff, 0xfe])]).toString('base64')
    expect(valid).toMatch(/[+/]/)
    expect(checkBase64Png(valid, 1024)).toBeUndefined()
    expect(checkBase64Png(valid.replaceAll('+', '-').replaceAll('/', '_'), 1024)).toMatch(/standard base64/)
    expect(checkBase64Png(`${valid.slice(0, 8)}\n${valid.slice(9)}`, 1024)).toMatch(/standard base64/)
    expect(checkBase64Png(`data:image/png;base64,${valid}`, 1024)).toMatch(/standard base64/)
    const padded = pngBase64(11)
    expect(padded.endsWith('=')).toBe(true)
    expect(checkBase64Png(padded.replace(/=+$/, ''), 1024)).toMatch(/padding/)
    // 11 bytes end in one '=': the character before it carries 2 unused bits, which must be zero.
    const last = padded.at(-2)!
    const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'
    const dirty = `${padded.slice(0, -2)}${ALPHABET[ALPHABET.indexOf(last) | 1]}=`
    expect(checkBase64Png(dirty, 1024)).toMatch(/canonical/)
    expect(checkBase64Png('', 1024)).toBe('must not be empty')
  })
})

describe('checkText', () => {
  it('counts characters as code points', () => {
    expect(checkText('😀'.repeat(5), 5)).toBeUndefined()
    expect(checkText('😀'.repeat(6), 5)).toBe('must be at most 5 characters')
    expect(checkText('a'.repeat(6), 5)).toBe('must be at most 5 characters')
  })

  it('refuses what PostgreSQL would not store exactly: NUL and unpaired surrogates', () => {
    expect(checkText('a\u0000b', 10)).toMatch(/U\+0000/)
    expect(checkText('a\uD800b', 10)).toMatch(/surrogate/)
    expect(checkText('a\uDC00', 10)).toMatch(/surrogate/)
    expect(checkText('é "quoted"\n\t😀', 20)).toBeUndefined()
  })
})

describe('parseClientTimestamp', () => {
  const now = Date.parse('2025-06-01T12:00:00.000Z')

  it('returns the instant of a UTC timestamp with milliseconds', () => {
    expect(parseClientTimestamp('2025-06-01T11:59:59.123Z', now, 0)).toBe(now - 877)
  })

  it('refuses other spellings and impossible dates', () => {
    for (const text of [
      '2025-06-01T11:59:59Z',
      '2025-06-01T11:59:59.1234Z',
      '2025-06-01T11:59:59.123+00:00',
      '2025-06-01 11:59:59.123Z',
      '2025-02-30T00:00:00.000Z',
      '2025-06-01T24:00:00.000Z',
    ]) {
      expect(typeof parseClientTimestamp(text, now, 0), text).toBe('string')
    }
  })

  it('allows the configured skew into the future and no more', () => {
    expect(parseClientTimestamp('2025-06-01T12:05:00.000Z', now, 300_000)).toBe(now + 300_000)
    expect(parseClientTimestamp('2025-06-01T12:05:00.001Z', now, 300_000)).toMatch(/future/)
  })
})
