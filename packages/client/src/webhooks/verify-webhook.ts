// Checking that a webhook delivery came from the service, as the Standard Webhooks specification defines it
// (docs/api.md, "Webhooks"): `webhook-signature` holds space-separated `v1,<base64 HMAC-SHA256>` under the endpoint's
// `whsec_` secret and `v1a,<base64 Ed25519>` under one of the keys the service publishes (`whpk_`, at
// /.well-known/webhook-keys), each over `{webhook-id}.{webhook-timestamp}.{body}`. One valid signature under a key the
// receiver holds is enough (during a secret's rotation a delivery carries one per secret), and the timestamp must be
// near the receiver's clock, so that a captured delivery cannot be replayed later. WebCrypto alone: the same code runs
// in Node, a browser and a worker, and its verify compares in constant time.
import { fromBase64 } from '../formats/base64.ts'

export class WebhookVerificationError extends Error {
  override name = 'WebhookVerificationError'
}

export interface WebhookVerificationKeys {
  /** The endpoint's secret, `whsec_…`, shown once when the webhook was registered or its secret rotated. */
  secret?: string
  /** The service's public keys, `whpk_…`, as GET /.well-known/webhook-keys lists them. */
  publicKeys?: readonly string[]
}

export interface VerifyWebhookOptions {
  /** How far the delivery's timestamp may be from now, either way; 5 minutes unless given. */
  toleranceSeconds?: number
  now?: Date
}

export const WEBHOOK_TOLERANCE_SECONDS = 300

type HeaderBag = Headers | Readonly<Record<string, string | readonly string[] | undefined>>

/** The event the delivery carries, once a signature under one of `keys` holds; WebhookVerificationError otherwise. */
export async function verifyWebhook(
  body: string,
  headers: HeaderBag,
  keys: WebhookVerificationKeys,
  options: VerifyWebhookOptions = {},
): Promise<unknown> {
  const id = header(headers, 'webhook-id')
  const timestamp = header(headers, 'webhook-timestamp')
  const signatures = header(headers, 'webhook-signature')
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError('missing webhook-id, -timestamp or -signature')
  if (!/^\d{1,12}$/.test(timestamp)) throw new WebhookVerificationError('webhook-timestamp is not Unix seconds')
  const now = Math.floor((options.now ?? new Date()).getTime() / 1000)
  const tolerance = options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS
  if (Math.abs(now - Number(timestamp)) > tolerance) throw new WebhookVerificationError('webhook-timestamp too far')
  const signed = new TextEncoder().encode(`${id}.${timestamp}.${body}`)
  const offered = signatures.split(' ').map((entry) => {
    const comma = entry.indexOf(',')
    return { version: entry.slice(0, comma), signature: decoded(entry.slice(comma + 1)) }
  })
  const hmacKey = keys.secret === undefined ? undefined : await importSecret(keys.secret)
  const publicKeys = await Promise.all((keys.publicKeys ?? []).map(importPublicKey))
  for (const { version, signature } of offered) {
    if (!signature) continue
    if (version === 'v1' && hmacKey && (await crypto.subtle.verify('HMAC', hmacKey, signature, signed))) {
      return JSON.parse(body)
    }
    if (version === 'v1a') {
      for (const key of publicKeys)
        if (await crypto.subtle.verify('Ed25519', key, signature, signed)) return JSON.parse(body)
    }
  }
  throw new WebhookVerificationError('no signature verifies under the keys given')
}

function header(headers: HeaderBag, name: string): string | undefined {
  if (typeof (headers as Headers).get === 'function') return (headers as Headers).get(name) ?? undefined
  const value = (headers as Record<string, string | readonly string[] | undefined>)[name]
  return typeof value === 'string' ? value : undefined
}

function decoded(base64: string): Uint8Array<ArrayBuffer> | undefined {
  try {
    return fromBase64(base64) as Uint8Array<ArrayBuffer>
  } catch {
    return undefined
  }
}

function importSecret(secret: string): Promise<CryptoKey> {
  const bytes = decoded(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret)
  if (!bytes || bytes.length === 0) throw new WebhookVerificationError('the secret is not a whsec_ secret')
  return crypto.subtle.importKey('raw', bytes, { name: 'HMAC', hash: 'SHA-256' }, false, ['verify'])
}

function importPublicKey(key: string): Promise<CryptoKey> {
  const bytes = key.startsWith('whpk_') ? decoded(key.slice('whpk_'.length)) : undefined
  if (bytes?.length !== 32) throw new WebhookVerificationError('a public key is not a whpk_ Ed25519 key')
  return crypto.subtle.importKey('raw', bytes, { name: 'Ed25519' }, false, ['verify'])
}
