// The signatures of a delivery, checked by the Standard Webhooks specification's own library and vector (v1), and by
// the client package's verifyWebhook under the published key (v1a).
import { createPrivateKey } from 'node:crypto'
import { verifyWebhook, WebhookVerificationError } from '@docanchor/client'
import { Webhook } from 'standardwebhooks'
import { describe, expect, it } from 'vitest'
import { newSigningKeyPair, newWebhookSecret, webhookSignature } from '../../src/events/webhook-signature.ts'

// The specification's vector (libraries/javascript, "sign function works").
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: 1614265330,
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
}

const pair = newSigningKeyPair()
const signingKey = createPrivateKey({ key: pair.privateKey, format: 'der', type: 'pkcs8' })

function headersOf(delivery: { id: string; timestamp: number }, signature: string) {
  return { 'webhook-id': delivery.id, 'webhook-timestamp': String(delivery.timestamp), 'webhook-signature': signature }
}

describe('webhook signatures', () => {
  it('give the specification’s v1 for its vector', () => {
    const header = webhookSignature(VECTOR, { secrets: [VECTOR.secret], signingKey })
    expect(header.split(' ')[0]).toBe(VECTOR.signature)
  })

  it('are verified by the standardwebhooks package (v1) and by verifyWebhook with either key kind', async () => {
    const secret = newWebhookSecret()
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/)
    const delivery = { id: 'evt_1', timestamp: Math.floor(Date.now() / 1000), body: '{"type":"webhook.test"}' }
    const headers = headersOf(delivery, webhookSignature(delivery, { secrets: [secret], signingKey }))
    expect(new Webhook(secret).verify(delivery.body, headers)).toEqual({ type: 'webhook.test' })
    expect(await verifyWebhook(delivery.body, headers, { secret })).toEqual({ type: 'webhook.test' })
    expect(await verifyWebhook(delivery.body, new Headers(headers), { publicKeys: [pair.publicKey] })).toEqual({
      type: 'webhook.test',
    })
  })

  it('carry one v1 per live secret while a secret rotates, each enough alone', async () => {
    const [older, newer] = [newWebhookSecret(), newWebhookSecret()]
    const delivery = { id: 'evt_2', timestamp: Math.floor(Date.now() / 1000), body: '{}' }
    const header = webhookSignature(delivery, { secrets: [newer, older], signingKey })
    expect(header.split(' ').map((entry) => entry.split(',')[0])).toEqual(['v1', 'v1', 'v1a'])
    for (const secret of [older, newer]) {
      expect(await verifyWebhook(delivery.body, headersOf(delivery, header), { secret })).toEqual({})
    }
  })

  it('refuse another body, another key, a stale or future timestamp, and missing headers', async () => {
    const secret = newWebhookSecret()
    const now = Math.floor(Date.now() / 1000)
    const delivery = { id: 'evt_3', timestamp: now, body: '{"a":1}' }
    const headers = headersOf(delivery, webhookSignature(delivery, { secrets: [secret], signingKey }))
    const refusals = [
      () => verifyWebhook('{"a":2}', headers, { secret, publicKeys: [pair.publicKey] }),
      () =>
        verifyWebhook(delivery.body, headers, {
          secret: newWebhookSecret(),
          publicKeys: [newSigningKeyPair().publicKey],
        }),
      () => verifyWebhook(delivery.body, headers, { secret }, { now: new Date((now + 301) * 1000) }),
      () => verifyWebhook(delivery.body, headers, { secret }, { now: new Date((now - 301) * 1000) }),
      () => verifyWebhook(delivery.body, { ...headers, 'webhook-signature': 'v1,AAAA v1a,@@@' }, { secret }),
      () => verifyWebhook(delivery.body, { ...headers, 'webhook-id': undefined }, { secret }),
      () => verifyWebhook(delivery.body, { ...headers, 'webhook-timestamp': '1e9' }, { secret }),
      () => verifyWebhook(delivery.body, headers, {}),
    ]
    for (const refusal of refusals) await expect(refusal()).rejects.toBeInstanceOf(WebhookVerificationError)
    // The same delivery signed for evt_4 does not verify as evt_3's.
    await expect(
      verifyWebhook(delivery.body, { ...headers, 'webhook-id': 'evt_4' }, { publicKeys: [pair.publicKey] }),
    ).rejects.toBeInstanceOf(WebhookVerificationError)
  })
})
