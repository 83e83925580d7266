// Signing a webhook delivery the Standard Webhooks way (docs/api.md, "Webhooks"): over `{id}.{timestamp}.{body}`, a
// `v1` HMAC-SHA256 per live secret of the endpoint (two while a rotated secret still signs) and a `v1a` Ed25519
// signature under the service's published key, so that anyone can check an event without a shared secret. The
// receiver's side is the client package's verifyWebhook.
import { createHmac, generateKeyPairSync, type KeyObject, randomBytes, sign } from 'node:crypto'

const SECRET_PREFIX = 'whsec_'
const PUBLIC_KEY_PREFIX = 'whpk_'
/** Svix's and the specification's examples use 24 random bytes: 192 bits, past any brute force. */
const SECRET_BYTES = 24

export interface DeliveryToSign {
  /** The event's id (`evt_…`): the `webhook-id` header. */
  id: string
  /** Unix seconds: the `webhook-timestamp` header. */
  timestamp: number
  /** The body exactly as sent. */
  body: string
}

export interface DeliveryKeys {
  /** The endpoint's live secrets (`whsec_…`), newest first. */
  secrets: readonly string[]
  /** The service's Ed25519 private key. */
  signingKey: KeyObject
}

/** The `webhook-signature` header: every `v1` and the `v1a`, space-separated. */
export function webhookSignature(delivery: DeliveryToSign, keys: DeliveryKeys): string {
  const content = Buffer.from(`${delivery.id}.${delivery.timestamp}.${delivery.body}`)
  const symmetric = keys.secrets.map(
    (secret) => `v1,${createHmac('sha256', secretBytes(secret)).update(content).digest('base64')}`,
  )
  return [...symmetric, `v1a,${sign(null, content, keys.signingKey).toString('base64')}`].join(' ')
}

export function newWebhookSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64')
}

/** A fresh Ed25519 key pair: the private key as PKCS#8 DER, the public key as published (`whpk_…`). */
export function newSigningKeyPair(): { privateKey: Buffer; publicKey: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519')
  return { privateKey: privateKey.export({ type: 'pkcs8', format: 'der' }), publicKey: publishedKey(publicKey) }
}

/** `whpk_` and the raw 32-byte public key in base64: what the client package's verifyWebhook takes. */
export function publishedKey(publicKey: KeyObject): string {
  const raw = publicKey.export({ format: 'jwk' }).x!
  return PUBLIC_KEY_PREFIX + Buffer.from(raw, 'base64url').toString('base64')
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, 'base64')
}
