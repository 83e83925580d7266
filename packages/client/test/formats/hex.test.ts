import { describe, expect, it } from 'vitest'
import { InvalidHexError } from '../../src/formats/errors.ts'
import { fromHex, isHex, toHex } from '../../src/formats/hex.ts'

describe('toHex', () => {
  it('writes lowercase, two digits per byte', () => {
    expect(toHex(new Uint8Array([0, 1, 0xab, 0xff]))).toBe('0001abff')
  })

  it('writes nothing for no bytes', () => {
    expect(toHex(new Uint8Array())).toBe('')
  })
})

describe('fromHex', () => {
  it('reads either case', () => {
    expect(fromHex('00aBfF')).toEqual(new Uint8Array([0, 0xab, 0xff]))
  })

  it.each([
    ['an odd length', 'abc'],
    ['a 0x prefix', '0xab'],
    ['a non-hex digit', 'zz'],
    ['a space', 'ab cd'],
    ['a sign', '-1'],
  ])('rejects %s', (_, text) => {
    expect(() => fromHex(text, 'salt')).toThrow(InvalidHexError)
    expect(() => fromHex(text, 'salt')).toThrow('salt: not an even-length string of hex digits')
  })
})

describe('isHex', () => {
  it('checks the length in characters when given', () => {
    expect(isHex('ab'.repeat(32), 64)).toBe(true)
    expect(isHex('ab'.repeat(32), 66)).toBe(false)
    expect(isHex('AB')).toBe(true)
  })

  it('refuses what is not hex text', () => {
    expect(isHex('0xab')).toBe(false)
    expect(isHex('abc')).toBe(false)
    expect(isHex(12)).toBe(false)
  })
})
