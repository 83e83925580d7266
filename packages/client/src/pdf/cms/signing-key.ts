// The key that signs a CMS SignedData (signed-data.ts): in the service a WebCrypto key (its development certificates)
// or a key on a PKCS#11 token. Either way it signs with SHA-256 and answers with the signature value as CMS carries
// it: DER for ECDSA (RFC 5753), the raw value for RSA PKCS#1 v1.5.
import { createCMSECDSASignature } from 'pkijs'
import { buffer } from './der.ts'

/** The curve of every key this project makes: P-256 (ECDSA), what PAdES baseline and the CA/B Forum accept. */
export const EC_SIGNING_KEY = { name: 'ECDSA', namedCurve: 'P-256' } as const

export interface DocumentSigningKey {
  readonly keyType: 'ec' | 'rsa'
  /** Signs `data` (hashed with SHA-256 here or on the token). */
  sign(data: Uint8Array): Promise<Uint8Array>
}

/** A WebCrypto private key: ECDSA P-256 or RSASSA-PKCS1-v1_5, both with SHA-256. */
export function webCryptoSigningKey(key: CryptoKey): DocumentSigningKey {
  const keyType = key.algorithm.name === 'ECDSA' ? 'ec' : 'rsa'
  return {
    keyType,
    async sign(data) {
      const algorithm = keyType === 'ec' ? { name: 'ECDSA', hash: 'SHA-256' } : { name: 'RSASSA-PKCS1-v1_5' }
      const value = await crypto.subtle.sign(algorithm, key, data as Uint8Array<ArrayBuffer>)
      return keyType === 'ec' ? ecdsaDer(new Uint8Array(value)) : new Uint8Array(value)
    },
  }
}

/** r‖s (WebCrypto's and PKCS#11's ECDSA output) as the DER SEQUENCE CMS carries. */
export function ecdsaDer(rs: Uint8Array): Uint8Array {
  return new Uint8Array(createCMSECDSASignature(buffer(rs)))
}
