// Property-based round trips over generated Unicode names, e-mail addresses, coordinates and bytes.

import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import {
  type AnchorPayload,
  buildAnchorPayload,
  parseAnchorPayload,
  serializeAnchorPayload,
  validateAnchorPayload,
} from '../../src/formats/anchor-payload.ts'
import { base64UrlLength, fromBase64Url, toBase64Url } from '../../src/formats/base64url.ts'
import { compositeHash, hashAnchorPayload } from '../../src/formats/composite-hash.ts'
import { firstDisplayControl } from '../../src/formats/display-text.ts'
import { DecryptionFailedError, InvalidBase64UrlError } from '../../src/formats/errors.ts'
import { isEmailAddress } from '../../src/formats/field-rules.ts'
import { fromHex, toHex } from '../../src/formats/hex.ts'
import {
  decryptPayload,
  encryptedPayloadLength,
  encryptPayload,
  generatePayloadKey,
} from '../../src/formats/payload-cipher.ts'
import {
  readPdfMetadata,
  rebuildPayloadFromMetadata,
  signatureFromPayload,
  writePdfMetadata,
} from '../../src/formats/pdf-metadata.ts'
import { buildQrUrl, parseQrUrl, txHashFromBase64Url, txHashToBase64Url } from '../../src/formats/qr-url.ts'

const utf8Length = (text: string) => new TextEncoder().encode(text).length

const hex64 = fc.uint8Array({ minLength: 32, maxLength: 32 }).map(toHex)
const txHash = hex64.map((hex) => `0x${hex}`)
const key = fc.uint8Array({ minLength: 16, maxLength: 16 })

// Any Unicode: whole code points of every plane (never lone surrogates) and user-perceived characters.
const unicodeText = (maxLength: number) =>
  fc.oneof(fc.string({ unit: 'binary', maxLength }), fc.string({ unit: 'grapheme', maxLength }))
// What a new payload's text may hold: any of that but control and bidirectional formatting characters.
const newText = (maxLength: number) => unicodeText(maxLength).filter((text) => firstDisplayControl(text) === undefined)
const name = newText(40).filter((text) => text.trim() !== '')

// Printable non-ASCII characters, as internationalized addresses allow them.
const nonAscii = fc
  .integer({ min: 0x80, max: 0x2ffff })
  .map((codePoint) => String.fromCodePoint(codePoint))
  .filter((char) => /^[^\p{C}\p{Z}]$/u.test(char))
const asciiAtext = fc.constantFrom(
  ..."abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789!#$%&'*+/=?^_`{|}~-",
)
const alnum = fc.constantFrom(...'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')
const joined = (chars: fc.Arbitrary<string>, maxLength: number) =>
  fc.array(chars, { minLength: 1, maxLength }).map((parts) => parts.join(''))
const localPart = fc
  .array(joined(fc.oneof(asciiAtext, nonAscii), 8), { minLength: 1, maxLength: 3 })
  .map((atoms) => atoms.join('.'))
  .filter((local) => utf8Length(local) <= 64)
const labelChar = fc.oneof(alnum, nonAscii)
const label = fc.oneof(
  labelChar,
  fc.tuple(labelChar, joined(fc.oneof(labelChar, fc.constant('-')), 8), labelChar).map((parts) => parts.join('')),
)
const domain = fc.array(label, { minLength: 2, maxLength: 4 }).map((labels) => labels.join('.'))
const email = fc.tuple(localPart, domain).map(([local, host]) => `${local}@${host}`)

const latitude = fc.double({ min: -90, max: 90, noNaN: true })
const longitude = fc.double({ min: -180, max: 180, noNaN: true })

const payloadInput = fc.record({
  documentHash: hex64,
  signer: fc.record({
    type: fc.constantFrom('individual' as const, 'company' as const),
    name,
    email,
    company: fc.option(newText(40), { nil: undefined }),
    position: fc.option(newText(40), { nil: undefined }),
    trust: fc.option(fc.constantFrom('email' as const, 'google' as const, 'microsoft' as const), { nil: undefined }),
    verified: fc.option(fc.boolean(), { nil: undefined }),
  }),
  timestamp: fc.integer({ min: 0, max: 253402300799 }),
  geo: fc.option(fc.record({ latitude, longitude }), { nil: undefined }),
  salt: hex64,
})
const payload: fc.Arbitrary<AnchorPayload> = payloadInput.map((input) => buildAnchorPayload(input))

// Every escape JSON.stringify wrote; only control characters may be escaped, never other non-ASCII.
function unicodeEscapes(serialized: string): number[] {
  return [...serialized.matchAll(/\\(u[0-9a-f]{4}|.)/g)]
    .map((match) => match[1]!)
    .filter((sequence) => sequence.startsWith('u'))
    .map((sequence) => Number.parseInt(sequence.slice(1), 16))
}

describe('round trips: e-mail addresses', () => {
  it('accepts generated Unicode addresses', () => {
    fc.assert(
      fc.property(email, (address) => {
        expect(isEmailAddress(address)).toBe(true)
      }),
      { numRuns: 1000 },
    )
  })

  it('rejects them with whitespace inserted anywhere', () => {
    fc.assert(
      fc.property(email, fc.nat(), fc.constantFrom(' ', '\t', '\n', '\u00a0', '\u3000'), (address, at, space) => {
        const i = at % (address.length + 1)
        expect(isEmailAddress(address.slice(0, i) + space + address.slice(i))).toBe(false)
      }),
      { numRuns: 500 },
    )
  })
})

describe('round trips: anchor payload', () => {
  it('parse(serialize(p)) is p and serialize(parse(s)) is s', () => {
    fc.assert(
      fc.property(payload, (p) => {
        const serialized = serializeAnchorPayload(p)
        const parsed = parseAnchorPayload(serialized)
        expect(parsed).toStrictEqual(p)
        expect(serializeAnchorPayload(parsed)).toBe(serialized)
        if (p.g) {
          // Coordinates survive to the last bit.
          expect(Object.is(parsed.g!.la, p.g.la) && Object.is(parsed.g!.ln, p.g.ln)).toBe(true)
        }
      }),
      { numRuns: 1000 },
    )
  })

  it('writes non-ASCII characters unescaped', () => {
    fc.assert(
      fc.property(payload, (p) => {
        for (const codeUnit of unicodeEscapes(serializeAnchorPayload(p))) expect(codeUnit).toBeLessThan(0x20)
      }),
      { numRuns: 500 },
    )
  })

  it('reads back a payload of any text, controls and bidirectional formatting characters included, as written', () => {
    fc.assert(
      fc.property(payload, unicodeText(40), unicodeText(40), (p, n, c) => {
        const old = validateAnchorPayload({ ...p, s: { ...p.s, n: `x${n}`, c: c || undefined } })
        const serialized = JSON.stringify(old)
        expect(parseAnchorPayload(serialized)).toStrictEqual(old)
        if (firstDisplayControl(`${n}${c}`) !== undefined) expect(() => serializeAnchorPayload(old)).toThrow(/s\.[nc]/)
      }),
      { numRuns: 500 },
    )
  })

  it('validation of a serialized payload is idempotent', () => {
    fc.assert(
      fc.property(payload, (p) => {
        expect(validateAnchorPayload(JSON.parse(serializeAnchorPayload(p)))).toStrictEqual(p)
      }),
      { numRuns: 300 },
    )
  })

  it('encrypts, decrypts and hashes back to the same payload within the predicted length', async () => {
    await fc.assert(
      fc.asyncProperty(payload, async (p) => {
        const serialized = serializeAnchorPayload(p)
        const key = generatePayloadKey()
        const encrypted = await encryptPayload(serialized, key)
        expect(encrypted).toHaveLength(encryptedPayloadLength(utf8Length(serialized)))
        expect(encrypted.length).toBeLessThanOrEqual(2048)
        const decrypted = await decryptPayload(encrypted, key)
        expect(decrypted).toBe(serialized)
        expect(parseAnchorPayload(decrypted)).toStrictEqual(p)
        expect(await compositeHash(decrypted)).toBe(await hashAnchorPayload(p))
      }),
      { numRuns: 200 },
    )
  })
})

describe('round trips: PDF metadata', () => {
  it('metadata written from a payload rebuilds the same bytes and composite hash', async () => {
    await fc.assert(
      fc.asyncProperty(payload, txHash, key, async (p, tx, k) => {
        const hash = await hashAnchorPayload(p)
        const qrUrl = buildQrUrl({ verifyBaseUrl: 'https://verify.example.com', txHash: tx, key: k })
        const signature = signatureFromPayload(p, { compositeHash: hash, txHash: tx, qrUrl, chainId: 1 })
        const [read] = readPdfMetadata(writePdfMetadata({ signatures: [signature] })).signatures
        expect(read).toStrictEqual(signature)
        const rebuilt = await rebuildPayloadFromMetadata(read!)
        expect(rebuilt.serialized).toBe(serializeAnchorPayload(p))
        expect(rebuilt.compositeHash).toBe(hash)
        expect(rebuilt.matchesMetadata).toBe(true)
      }),
      { numRuns: 200 },
    )
  })
})

describe('round trips: ciphertext', () => {
  it('any single flipped bit makes decryption fail with the one plain error', async () => {
    await fc.assert(
      fc.asyncProperty(unicodeText(60), fc.nat(), fc.integer({ min: 0, max: 7 }), async (text, at, bit) => {
        const key = generatePayloadKey()
        const bytes = fromBase64Url(await encryptPayload(text, key))
        bytes[at % bytes.length]! ^= 1 << bit
        await expect(decryptPayload(toBase64Url(bytes), key)).rejects.toThrow(DecryptionFailedError)
      }),
      { numRuns: 200 },
    )
  })
})

describe('round trips: encodings', () => {
  it('base64url: bytes survive, with or without padding, at the predicted length', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 100 }), (bytes) => {
        const encoded = toBase64Url(bytes)
        expect(encoded).toHaveLength(base64UrlLength(bytes.length))
        expect(encoded).toMatch(/^[A-Za-z0-9_-]*$/)
        // Compared as hex: deep equality of typed arrays is slow over thousands of runs.
        expect(toHex(fromBase64Url(encoded))).toBe(toHex(bytes))
        expect(toHex(fromBase64Url(encoded + '='.repeat((4 - (encoded.length % 4)) % 4)))).toBe(toHex(bytes))
      }),
      { numRuns: 2000 },
    )
  })

  it('base64url: any accepted text is the one canonical spelling of its bytes', () => {
    const chars = fc.constantFrom(...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_+/= \n')
    fc.assert(
      fc.property(fc.array(chars, { maxLength: 24 }), (parts) => {
        const text = parts.join('')
        let bytes: Uint8Array
        try {
          bytes = fromBase64Url(text)
        } catch (error) {
          expect(error).toBeInstanceOf(InvalidBase64UrlError)
          return
        }
        expect(toBase64Url(bytes)).toBe(text.replace(/=+$/, ''))
      }),
      { numRuns: 2000 },
    )
  })

  it('hex: bytes survive', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const hex = toHex(bytes)
        expect(hex).toMatch(/^(?:[0-9a-f]{2})*$/)
        expect(toBase64Url(fromHex(hex))).toBe(toBase64Url(bytes))
        expect(toBase64Url(fromHex(hex.toUpperCase()))).toBe(toBase64Url(bytes))
      }),
      { numRuns: 1000 },
    )
  })

  it('transaction hash: 0x hex and the 43-character form convert both ways', () => {
    fc.assert(
      fc.property(txHash, (tx) => {
        const encoded = txHashToBase64Url(tx)
        expect(encoded).toHaveLength(43)
        expect(txHashFromBase64Url(encoded)).toBe(tx)
      }),
      { numRuns: 1000 },
    )
  })

  it('QR URL: parts survive build and parse, and the URL rebuilds identically', () => {
    const base = fc
      .webUrl({ validSchemes: ['https', 'http'], withQueryParameters: false, withFragments: false })
      .map((url) => url.replace(/\/+$/, ''))
    fc.assert(
      fc.property(base, txHash, key, (verifyBaseUrl, tx, k) => {
        const url = buildQrUrl({ verifyBaseUrl, txHash: tx, key: k })
        expect(url).toHaveLength(verifyBaseUrl.length + 3 + 43 + 1 + 22)
        const parts = parseQrUrl(url)
        expect(parts.verifyBaseUrl).toBe(verifyBaseUrl)
        expect(parts.txHash).toBe(tx)
        expect(toHex(parts.key)).toBe(toHex(k))
        expect(buildQrUrl(parts)).toBe(url)
      }),
      { numRuns: 1000 },
    )
  })
})
