import { describe, expect, it } from 'vitest'
import { type AnchorPayload, serializeAnchorPayload } from '../../src/formats/anchor-payload.ts'
import {
  compositeHash,
  compositeHashesEqual,
  hashAnchorPayload,
  isCompositeHash,
} from '../../src/formats/composite-hash.ts'

const PAYLOAD: AnchorPayload = {
  d: 'f35efb19fdb382572e3271363516e989c5179a0a7c859e26e4e7fe1b5568217f',
  s: { t: 'individual', n: 'Ada Lovelace', e: 'ada@example.com' },
  ts: 1763700000,
  salt: '51c76b7890a05aabbda25a5b119300938a4e407a7329c0190abdc35ea5bf51c2',
}

describe('compositeHash', () => {
  it.each([
    ['', '0xe3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'],
    ['abc', '0xba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad'],
  ])('is 0x + the lowercase SHA-256 hex of %j', async (text, hash) => {
    expect(await compositeHash(text)).toBe(hash)
  })

  it('hashes text as UTF-8', async () => {
    expect(await compositeHash('Zoë')).toBe(await compositeHash(new Uint8Array([0x5a, 0x6f, 0xc3, 0xab])))
    expect(await compositeHash('Zoë')).not.toBe(await compositeHash(new Uint8Array([0x5a, 0x6f, 0xeb])))
  })

  it('is 66 characters long', async () => {
    expect(await compositeHash('x')).toMatch(/^0x[0-9a-f]{64}$/)
  })
})

describe('hashAnchorPayload', () => {
  it('hashes the canonical serialization', async () => {
    expect(await hashAnchorPayload(PAYLOAD)).toBe(await compositeHash(serializeAnchorPayload(PAYLOAD)))
  })

  it.each([
    ['d', { ...PAYLOAD, d: `${PAYLOAD.d.slice(0, -1)}e` }],
    ['s.n', { ...PAYLOAD, s: { ...PAYLOAD.s, n: 'Ada Lovelac' } }],
    ['s.v', { ...PAYLOAD, s: { ...PAYLOAD.s, v: false } }],
    ['ts', { ...PAYLOAD, ts: PAYLOAD.ts + 1 }],
    ['g', { ...PAYLOAD, g: { la: 0, ln: 0 } }],
    ['salt', { ...PAYLOAD, salt: `${PAYLOAD.salt.slice(0, -1)}3` }],
  ])('changes when %s changes', async (_, changed) => {
    expect(await hashAnchorPayload(changed)).not.toBe(await hashAnchorPayload(PAYLOAD))
  })
})

describe('isCompositeHash', () => {
  const hash = `0x${'aB'.repeat(32)}`

  it('accepts 0x and 64 hex digits of either case', () => {
    expect(isCompositeHash(hash)).toBe(true)
  })

  it.each([
    ['no prefix', 'ab'.repeat(32)],
    ['an upper-case prefix', `0X${'ab'.repeat(32)}`],
    ['65 characters', hash.slice(0, -1)],
    ['67 characters', `${hash}0`],
    ['a non-hex digit', `0x${'g'.repeat(64)}`],
    ['a number', 42],
  ])('rejects %s', (_, value) => {
    expect(isCompositeHash(value)).toBe(false)
  })
})

describe('compositeHashesEqual', () => {
  const lower = `0x${'ab'.repeat(32)}`

  it('ignores hex case', () => {
    expect(compositeHashesEqual(lower, lower.toUpperCase().replace('0X', '0x'))).toBe(true)
  })

  it('tells different hashes apart', () => {
    expect(compositeHashesEqual(lower, `0x${'ab'.repeat(31)}ac`)).toBe(false)
  })

  it('is false for malformed values, even identical ones', () => {
    expect(compositeHashesEqual('0x12', '0x12')).toBe(false)
    expect(compositeHashesEqual('ab'.repeat(32), 'ab'.repeat(32))).toBe(false)
  })
})
