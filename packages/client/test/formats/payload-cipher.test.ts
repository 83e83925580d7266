import { describe, expect, it } from 'vitest'
import { fromBase64Url, toBase64Url } from '../../src/formats/base64url.ts'
import { DecryptionFailedError, InvalidCipherInputError } from '../../src/formats/errors.ts'
import {
  decryptPayload,
  encryptedPayloadLength,
  encryptPayload,
  encryptPayloadWithNonce,
  generatePayloadKey,
  PAYLOAD_KEY_BYTES,
} from '../../src/formats/payload-cipher.ts'

const KEY = new Uint8Array(16).map((_, i) => i + 1)
const NONCE = new Uint8Array(12).map((_, i) => 0xa0 + i)
const PLAINTEXT = '{"n":"Zoë Ångström 山田"}'

function flipBit(encoded: string, byteIndex: number): string {
  const bytes = fromBase64Url(encoded)
  bytes[byteIndex]! ^= 0x01
  return toBase64Url(bytes)
}

async function rawSeal(bytes: Uint8Array, key: Uint8Array, nonce: Uint8Array): Promise<string> {
  const cryptoKey = await crypto.subtle.importKey('raw', new Uint8Array(key), 'AES-GCM', false, ['encrypt'])
  const sealed = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv: new Uint8Array(nonce) }, cryptoKey, new Uint8Array(bytes)),
  )
  return toBase64Url(new Uint8Array([...nonce, ...sealed]))
}

describe('generatePayloadKey', () => {
  it('gives 16 fresh random bytes', () => {
    const key = generatePayloadKey()
    expect(key).toHaveLength(PAYLOAD_KEY_BYTES)
    expect(toBase64Url(key)).toHaveLength(22)
    expect(generatePayloadKey()).not.toEqual(key)
  })
})

describe('encryptedPayloadLength', () => {
  it.each([
    [0, 38],
    [1, 39],
    [1508, 2048],
    [1509, 2050],
  ])('predicts %i plaintext bytes as %i characters', async (bytes, chars) => {
    expect(encryptedPayloadLength(bytes)).toBe(chars)
    expect(await encryptPayload('a'.repeat(bytes), KEY)).toHaveLength(chars)
  })
})

describe('encryptPayload', () => {
  it('uses a fresh nonce each time', async () => {
    const a = await encryptPayload(PLAINTEXT, KEY)
    const b = await encryptPayload(PLAINTEXT, KEY)
    expect(a).not.toBe(b)
    expect(fromBase64Url(a).subarray(0, 12)).not.toEqual(fromBase64Url(b).subarray(0, 12))
  })

  it('round-trips through decryptPayload', async () => {
    expect(await decryptPayload(await encryptPayload(PLAINTEXT, KEY), KEY)).toBe(PLAINTEXT)
  })

  it('writes unpadded base64url', async () => {
    expect(await encryptPayload('ab', KEY)).toMatch(/^[A-Za-z0-9_-]+$/)
  })
})

describe('encryptPayloadWithNonce', () => {
  it('is deterministic and puts the nonce first', async () => {
    const a = await encryptPayloadWithNonce(PLAINTEXT, KEY, NONCE)
    expect(await encryptPayloadWithNonce(PLAINTEXT, KEY, NONCE)).toBe(a)
    expect(fromBase64Url(a).subarray(0, 12)).toEqual(NONCE)
  })

  it('matches a plain AES-128-GCM seal without associated data', async () => {
    const expected = await rawSeal(new TextEncoder().encode(PLAINTEXT), KEY, NONCE)
    expect(await encryptPayloadWithNonce(PLAINTEXT, KEY, NONCE)).toBe(expected)
  })

  it.each([
    ['a 15-byte key', new Uint8Array(15), NONCE, 'key: must be 16 bytes, got 15 bytes'],
    ['a 32-byte key', new Uint8Array(32), NONCE, 'key: must be 16 bytes, got 32 bytes'],
    ['an 11-byte nonce', KEY, new Uint8Array(11), 'nonce: must be 12 bytes, got 11 bytes'],
    ['a 16-byte nonce', KEY, new Uint8Array(16), 'nonce: must be 12 bytes, got 16 bytes'],
  ])('rejects %s', async (_, key, nonce, message) => {
    const attempt = encryptPayloadWithNonce(PLAINTEXT, key, nonce)
    await expect(attempt).rejects.toThrow(InvalidCipherInputError)
    await expect(attempt).rejects.toThrow(message)
  })

  it('names the failure with a stable code', async () => {
    await expect(encryptPayload(PLAINTEXT, new Uint8Array(8))).rejects.toMatchObject({
      code: 'ERR_INVALID_CIPHER_INPUT',
    })
  })
})

describe('decryptPayload', () => {
  it('decrypts an empty plaintext', async () => {
    expect(await decryptPayload(await encryptPayload('', KEY), KEY)).toBe('')
  })

  it('keeps a leading byte order mark, so the text hashes to what was encrypted', async () => {
    expect(await decryptPayload(await encryptPayload('\uFEFF{}', KEY), KEY)).toBe('\uFEFF{}')
  })

  it('accepts correctly padded base64url', async () => {
    const encrypted = await encryptPayload('a', KEY)
    const padded = encrypted + '='.repeat((4 - (encrypted.length % 4)) % 4)
    expect(padded).not.toBe(encrypted)
    expect(await decryptPayload(padded, KEY)).toBe('a')
  })

  const cases: [string, (encrypted: string) => Promise<[string, Uint8Array]> | [string, Uint8Array]][] = [
    ['a wrong key', (e) => [e, new Uint8Array(16)]],
    ['a key one bit off', (e) => [e, KEY.map((b, i) => (i === 15 ? b ^ 1 : b))]],
    ['a 15-byte key', (e) => [e, KEY.subarray(0, 15)]],
    ['a 32-byte key', (e) => [e, new Uint8Array([...KEY, ...KEY])]],
    ['a flipped nonce bit', (e) => [flipBit(e, 0), KEY]],
    ['a flipped ciphertext bit', (e) => [flipBit(e, 14), KEY]],
    ['a flipped tag bit', (e) => [flipBit(e, fromBase64Url(e).length - 1), KEY]],
    ['a truncated tag', (e) => [toBase64Url(fromBase64Url(e).subarray(0, -1)), KEY]],
    ['a dropped last character', (e) => [e.slice(0, -1), KEY]],
    ['an appended byte', (e) => [toBase64Url(new Uint8Array([...fromBase64Url(e), 0])), KEY]],
    ['only nonce and tag length minus one', () => [toBase64Url(new Uint8Array(27)), KEY]],
    ['only a nonce', () => [toBase64Url(NONCE), KEY]],
    ['an empty string', () => ['', KEY]],
    ['a + character', (e) => [`+${e.slice(1)}`, KEY]],
    ['a / character', (e) => [`/${e.slice(1)}`, KEY]],
    ['whitespace', (e) => [`${e.slice(0, 10)} ${e.slice(10)}`, KEY]],
    ['wrong padding', (e) => [`${e}=`, KEY]],
    ['non-UTF-8 plaintext', async () => [await rawSeal(new Uint8Array([0x7b, 0xff, 0x7d]), KEY, NONCE), KEY]],
  ]

  it.each(cases)('fails with %s, with the one plain error', async (_, tamper) => {
    const [encrypted, key] = await tamper(await encryptPayloadWithNonce(PLAINTEXT, KEY, NONCE))
    let caught: unknown
    try {
      await decryptPayload(encrypted, key)
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(DecryptionFailedError)
    const error = caught as DecryptionFailedError
    expect(error.message).toBe('decryption operation failed')
    expect(error.code).toBe('ERR_DECRYPTION_FAILED')
    expect(error.cause).toBeUndefined()
  })
})
