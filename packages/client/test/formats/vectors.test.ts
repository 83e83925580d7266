// Every vector of the independent implementation (test/vectors/formats.json), reproduced byte for byte.

import { describe, expect, it } from 'vitest'
import {
  buildAnchorPayload,
  parseAnchorPayload,
  serializeAnchorPayload,
  validateAnchorPayload,
} from '../../src/formats/anchor-payload.ts'
import { fromBase64Url, toBase64Url } from '../../src/formats/base64url.ts'
import { compositeHash, hashAnchorPayload } from '../../src/formats/composite-hash.ts'
import { DecryptionFailedError } from '../../src/formats/errors.ts'
import { fromHex, toHex } from '../../src/formats/hex.ts'
import { decryptPayload, encryptPayloadWithNonce } from '../../src/formats/payload-cipher.ts'
import {
  parsePdfMetadata,
  readPdfMetadata,
  rebuildPayloadFromMetadata,
  signatureFromPayload,
  writePdfMetadata,
} from '../../src/formats/pdf-metadata.ts'
import { buildQrUrl, parseQrUrl, txHashFromBase64Url } from '../../src/formats/qr-url.ts'
import vectors from '../vectors/formats.json' with { type: 'json' }

const payloads = vectors.payloads.map((vector) => [vector.name, vector] as const)

describe('vectors: anchor payload', () => {
  it('covers four payloads and two mustFail cases', () => {
    expect(vectors.payloads).toHaveLength(4)
    expect(vectors.mustFail).toHaveLength(2)
  })

  it.each(payloads)('%s: serializes to the vector bytes', (_, vector) => {
    expect(serializeAnchorPayload(validateAnchorPayload(vector.payloadInput))).toBe(vector.serialized)
  })

  it.each(payloads)('%s: the builder, given the salt, produces the same bytes', (_, vector) => {
    const { d, s, ts, salt } = vector.payloadInput
    const g = 'g' in vector.payloadInput ? vector.payloadInput.g : undefined
    const payload = buildAnchorPayload({
      documentHash: d,
      signer: {
        type: s.t as 'individual' | 'company',
        name: s.n,
        email: s.e,
        company: 'c' in s ? s.c : undefined,
        position: 'p' in s ? s.p : undefined,
        trust: 'tr' in s ? (s.tr as 'email' | 'google' | 'microsoft') : undefined,
        verified: 'v' in s ? s.v : undefined,
      },
      timestamp: ts,
      geo: g ? { latitude: g.la, longitude: g.ln } : undefined,
      salt,
    })
    expect(serializeAnchorPayload(payload)).toBe(vector.serialized)
  })

  it.each(payloads)('%s: parses its serialization strictly and reserializes it unchanged', (_, vector) => {
    expect(serializeAnchorPayload(parseAnchorPayload(vector.serialized))).toBe(vector.serialized)
  })
})

describe('vectors: composite hash', () => {
  it.each(payloads)('%s: hashes the serialized bytes', async (_, vector) => {
    expect(await compositeHash(vector.serialized)).toBe(vector.compositeHash)
    expect(await compositeHash(new TextEncoder().encode(vector.serialized))).toBe(vector.compositeHash)
  })

  it.each(payloads)('%s: hashes the payload object', async (_, vector) => {
    expect(await hashAnchorPayload(validateAnchorPayload(vector.payloadInput))).toBe(vector.compositeHash)
  })
})

describe('vectors: ciphertext', () => {
  it.each(payloads)('%s: the key hex and base64url forms agree', (_, vector) => {
    expect(toBase64Url(fromHex(vector.keyHex))).toBe(vector.keyB64url)
    expect(toHex(fromBase64Url(vector.keyB64url))).toBe(vector.keyHex)
  })

  it.each(payloads)('%s: encrypts to the vector given its key and nonce', async (_, vector) => {
    const encrypted = await encryptPayloadWithNonce(vector.serialized, fromHex(vector.keyHex), fromHex(vector.nonceHex))
    expect(encrypted).toBe(vector.encryptedPayload)
  })

  it.each(payloads)('%s: decrypts the vector to the serialized payload', async (_, vector) => {
    expect(await decryptPayload(vector.encryptedPayload, fromBase64Url(vector.keyB64url))).toBe(vector.serialized)
  })

  it.each(vectors.mustFail.map((c) => [c.expect, c] as const))('mustFail: %s', async (_, failure) => {
    const attempt = decryptPayload(failure.encryptedPayload, fromBase64Url(failure.keyB64url))
    await expect(attempt).rejects.toThrow(DecryptionFailedError)
    await expect(attempt).rejects.toThrow('decryption operation failed')
  })
})

describe('vectors: QR URL', () => {
  it.each(payloads)('%s: builds the vector URL', (_, vector) => {
    const url = buildQrUrl({
      verifyBaseUrl: vector.verifyBaseUrl,
      txHash: vector.txHash,
      key: fromBase64Url(vector.keyB64url),
    })
    expect(url).toBe(vector.qrUrl)
  })

  it.each(payloads)('%s: parses the vector URL back to its parts', (_, vector) => {
    const parts = parseQrUrl(vector.qrUrl)
    expect(parts.verifyBaseUrl).toBe(vector.verifyBaseUrl)
    expect(parts.txHash).toBe(vector.txHash)
    expect(toHex(parts.key)).toBe(vector.keyHex)
    expect(txHashFromBase64Url(vector.qrUrl.split('/v/')[1]!.split('#')[0]!)).toBe(vector.txHash)
  })

  it.each(payloads)('%s: QR URL, ciphertext and hash verify end to end', async (_, vector) => {
    const { key } = parseQrUrl(vector.qrUrl)
    const plaintext = await decryptPayload(vector.encryptedPayload, key)
    expect(await compositeHash(plaintext)).toBe(vector.compositeHash)
    expect(parseAnchorPayload(plaintext)).toEqual(validateAnchorPayload(vector.payloadInput))
  })
})

describe('vectors: PDF metadata', () => {
  it('reads version 1 as version 2 with the defaults filled in', () => {
    expect(parsePdfMetadata(vectors.pdfMetadata.v1)).toStrictEqual(vectors.pdfMetadata.v1ReadAsV2)
  })

  it('reads version 1 JSON text the same way', () => {
    expect(readPdfMetadata(JSON.stringify(vectors.pdfMetadata.v1))).toStrictEqual(vectors.pdfMetadata.v1ReadAsV2)
  })

  it('writes the upgraded document as version 2 and reads it back unchanged', () => {
    const written = writePdfMetadata(parsePdfMetadata(vectors.pdfMetadata.v1))
    expect(JSON.parse(written)).toStrictEqual(vectors.pdfMetadata.v1ReadAsV2)
    expect(readPdfMetadata(written)).toStrictEqual(vectors.pdfMetadata.v1ReadAsV2)
  })

  it.each(payloads)('%s: metadata written from the payload rebuilds the vector bytes and hash', async (_, vector) => {
    const signature = signatureFromPayload(validateAnchorPayload(vector.payloadInput), {
      compositeHash: vector.compositeHash,
      txHash: vector.txHash,
      qrUrl: vector.qrUrl,
      chainId: 31337,
      contractAddress: '0x5FbDB2315678afecb367f032d93F642f64180aa3',
    })
    const [read] = readPdfMetadata(writePdfMetadata({ signatures: [signature] })).signatures
    const rebuilt = await rebuildPayloadFromMetadata(read!)
    expect(rebuilt.serialized).toBe(vector.serialized)
    expect(rebuilt.compositeHash).toBe(vector.compositeHash)
    expect(rebuilt.matchesMetadata).toBe(true)
  })

  it('the version 1 vector has the timestamp of the payload it describes', () => {
    const [signature] = vectors.pdfMetadata.v1.signatures
    const payload = vectors.payloads.find((p) => p.compositeHash === signature!.composite_hash)!
    expect(Date.parse(signature!.timestamp) / 1000).toBe(payload.payloadInput.ts)
  })
})
