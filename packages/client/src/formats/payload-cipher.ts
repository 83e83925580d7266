// AES-128-GCM encryption of the serialized anchor payload: base64url(nonce 12 B || ciphertext || tag 16 B), no
// associated data. The key travels only in the QR URL fragment; the service stores the ciphertext it cannot read.

import { base64UrlLength, fromBase64Url, toBase64Url } from './base64url.ts'
import { DecryptionFailedError, InvalidCipherInputError } from './errors.ts'

export const PAYLOAD_KEY_BYTES = 16
export const PAYLOAD_NONCE_BYTES = 12
export const PAYLOAD_TAG_BYTES = 16

const utf8 = new TextEncoder()
// fatal: invalid UTF-8 is a failure, not U+FFFD; ignoreBOM: keep a leading BOM so the text re-encodes to the same
// bytes and hashes to what was anchored.
const utf8Strict = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/** Length of the base64url ciphertext for a plaintext of `plaintextByteLength` UTF-8 bytes. */
export function encryptedPayloadLength(plaintextByteLength: number): number {
  return base64UrlLength(PAYLOAD_NONCE_BYTES + plaintextByteLength + PAYLOAD_TAG_BYTES)
}

/** A fresh 16-byte key from the platform's secure random source. */
export function generatePayloadKey(): Uint8Array<ArrayBuffer> {
  return crypto.getRandomValues(new Uint8Array(PAYLOAD_KEY_BYTES))
}

function checkLength(value: Uint8Array, bytes: number, name: string): void {
  if (!(value instanceof Uint8Array) || value.length !== bytes) {
    const got = value instanceof Uint8Array ? `${value.length} bytes` : typeof value
    throw new InvalidCipherInputError(`${name}: must be ${bytes} bytes, got ${got}`)
  }
}

function importKey(key: Uint8Array, usage: 'encrypt' | 'decrypt'): Promise<CryptoKey> {
  // Copied so the caller's buffer, whatever it is backed by, is never handed to the crypto engine.
  return crypto.subtle.importKey('raw', new Uint8Array(key), { name: 'AES-GCM' }, false, [usage])
}

/** Encrypts `plaintext` (UTF-8) under `key` with a fresh random nonce. */
export function encryptPayload(plaintext: string, key: Uint8Array): Promise<string> {
  return encryptPayloadWithNonce(plaintext, key, crypto.getRandomValues(new Uint8Array(PAYLOAD_NONCE_BYTES)))
}

/**
 * Encrypts with a caller-chosen nonce. Exists to reproduce test vectors: a nonce reused under the same key breaks
 * GCM completely, so production code calls `encryptPayload`.
 */
export async function encryptPayloadWithNonce(plaintext: string, key: Uint8Array, nonce: Uint8Array): Promise<string> {
  checkLength(key, PAYLOAD_KEY_BYTES, 'key')
  checkLength(nonce, PAYLOAD_NONCE_BYTES, 'nonce')
  const iv = new Uint8Array(nonce)
  const sealed = await crypto.subtle.encrypt(
    { name: 'AES-GCM', iv },
    await importKey(key, 'encrypt'),
    utf8.encode(plaintext),
  )
  const out = new Uint8Array(PAYLOAD_NONCE_BYTES + sealed.byteLength)
  out.set(iv)
  out.set(new Uint8Array(sealed), PAYLOAD_NONCE_BYTES)
  return toBase64Url(out)
}

/**
 * Decrypts a base64url ciphertext to its UTF-8 plaintext. Every failure (malformed or truncated text, wrong key or
 * key size, tampering, invalid UTF-8) throws the same `DecryptionFailedError`, without a cause.
 */
export async function decryptPayload(encryptedPayload: string, key: Uint8Array): Promise<string> {
  let plaintext: string
  try {
    if (!(key instanceof Uint8Array) || key.length !== PAYLOAD_KEY_BYTES) throw new DecryptionFailedError()
    const bytes = fromBase64Url(encryptedPayload)
    // WebCrypto would refuse this too; checked here so a short nonce never reaches it.
    if (bytes.length < PAYLOAD_NONCE_BYTES + PAYLOAD_TAG_BYTES) throw new DecryptionFailedError()
    const opened = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: bytes.subarray(0, PAYLOAD_NONCE_BYTES) },
      await importKey(key, 'decrypt'),
      bytes.subarray(PAYLOAD_NONCE_BYTES),
    )
    plaintext = utf8Strict.decode(opened)
  } catch {
    throw new DecryptionFailedError()
  }
  return plaintext
}
