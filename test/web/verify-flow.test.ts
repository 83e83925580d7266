// The page's logic without a browser: reading the link, classifying answers, and every verdict, including those the
// real service never produces (a chain that does not link up, details that hash right but do not parse).

import {
  buildAnchorPayload,
  compositeHash,
  encryptPayload,
  generatePayloadKey,
  serializeAnchorPayload,
  txHashToBase64Url,
  ZERO_TX_HASH,
} from '@docanchor/client'
import { describe, expect, it } from 'vitest'
import { type ApiClient, createApiClient, type VerifyAnswer } from '../../src/web/client/api-client.ts'
import { parseLink, verifyLink } from '../../src/web/client/verify-flow.ts'
import {
  type ChainEntry,
  chainLinksUp,
  parseVerifyRecord,
  type VerifyRecord,
} from '../../src/web/client/verify-record.ts'

const hash = (byte: string) => `0x${byte.repeat(32)}`
const RELAYER = `0x${'ab'.repeat(20)}`

function entry(txHash: string, previousTxHash: string, composite = hash('cc')): ChainEntry {
  return {
    txHash,
    compositeHash: composite,
    signer: RELAYER,
    timestamp: 1_763_700_000,
    previousTxHash,
    attestation: null,
  }
}

function record(chain: ChainEntry[], encryptedPayload: string | null, successors: ChainEntry[] = []): VerifyRecord {
  return { ...chain.at(-1)!, chain, encryptedPayload, payloadErased: false, successors, moreSuccessors: 0 }
}

/** Answers every lookup with `answer`. */
const answering = (answer: VerifyAnswer): ApiClient => ({
  verify: async () => answer,
  info: async () => undefined,
  successorPage: async () => undefined,
})

async function sealed(plaintext: string) {
  const key = generatePayloadKey()
  return { key, encryptedPayload: await encryptPayload(plaintext, key), compositeHash: await compositeHash(plaintext) }
}

describe('parseLink', () => {
  const tx = hash('6c')
  it('reads the base64url and the hex forms of the transaction hash, under any path prefix', () => {
    expect(parseLink(`/v/${txHashToBase64Url(tx)}`, '').txHash).toBe(tx)
    expect(parseLink(`/verify/v/${tx.toUpperCase().replace('0X', '0x')}`, '').txHash).toBe(tx)
    expect(parseLink('/v/not-a-hash', '').txHash).toBeUndefined()
    expect(parseLink('/elsewhere', '').txHash).toBeUndefined()
  })

  it('tells a missing key from a damaged one', () => {
    expect(parseLink('/v/x', '').key).toBeUndefined()
    expect(parseLink('/v/x', '#').key).toBeUndefined()
    expect(parseLink('/v/x', '#R6R04VY8tdZe80bH1TuY9A').key).toHaveLength(16)
    expect(parseLink('/v/x', '#R6R04VY8tdZe80bH1TuY9').key).toBeNull()
    expect(parseLink('/v/x', '#R6R04VY8tdZe80bH1TuY9A+').key).toBeNull()
  })
})

describe('parseVerifyRecord and chainLinksUp', () => {
  const first = entry(hash('01'), ZERO_TX_HASH)
  const second = entry(hash('02'), hash('01'))

  it('accepts the documented shape and refuses anything else', () => {
    const good = record([first, second], 'AAAA')
    expect(parseVerifyRecord(JSON.parse(JSON.stringify(good)))).toEqual(good)
    expect(parseVerifyRecord({ ...good, chain: [{ ...first, txHash: 'x' }] })).toBeUndefined()
    expect(parseVerifyRecord({ ...good, encryptedPayload: '<script>' })).toBeUndefined()
    expect(parseVerifyRecord({ ...good, timestamp: -1 })).toBeUndefined()
    expect(parseVerifyRecord(null)).toBeUndefined()
  })

  it('reads attestations, takes an absent one (an older service) as none, and refuses a malformed one', () => {
    const attestation = { trust: 'google', verified: true, identityCommitment: hash('ee') } as const
    const good = record([first, { ...second, attestation }], 'AAAA')
    expect(parseVerifyRecord(JSON.parse(JSON.stringify({ ...good, attestation })))).toEqual({ ...good, attestation })
    const { attestation: _, ...older } = first
    expect(parseVerifyRecord({ ...good, chain: [older, second] })?.chain[0]?.attestation).toBeNull()
    expect(parseVerifyRecord({ ...good, attestation: { ...attestation, trust: 'github' } })).toBeUndefined()
    expect(parseVerifyRecord({ ...good, chain: [{ ...first, attestation: 'yes' }, second] })).toBeUndefined()
  })

  it('accepts a chain from a first signature to the requested one, and refuses spliced ones', () => {
    expect(chainLinksUp(record([first, second], null), hash('02'))).toBe(true)
    expect(chainLinksUp(record([first, second], null), hash('01'))).toBe(false)
    expect(chainLinksUp(record([second], null), hash('02'))).toBe(false)
    expect(chainLinksUp(record([first, entry(hash('02'), hash('09'))], null), hash('02'))).toBe(false)
    expect(chainLinksUp({ ...record([first, second], null), compositeHash: hash('dd') }, hash('02'))).toBe(false)
    expect(chainLinksUp(record([first, second], null, [entry(hash('03'), hash('01'))]), hash('02'))).toBe(false)
    expect(chainLinksUp(record([first, second], null, [entry(hash('03'), hash('02'))]), hash('02'))).toBe(true)
  })
})

describe('verifyLink', () => {
  const tx = hash('01')
  const link = (key: Uint8Array | null | undefined) => ({ txHash: tx, key })

  it('verifies details that decrypt and hash to the anchored composite hash', async () => {
    const payload = buildAnchorPayload({
      documentHash: 'aa'.repeat(32),
      signer: { type: 'individual', name: 'Ada Lovelace', email: 'ada@example.com' },
      timestamp: 1_763_700_000,
    })
    const { key, encryptedPayload, compositeHash: composite } = await sealed(serializeAnchorPayload(payload))
    const found = record([entry(tx, ZERO_TX_HASH, composite)], encryptedPayload)
    const verdict = await verifyLink(link(key), answering({ kind: 'found', record: found }))
    expect(verdict).toEqual({
      kind: 'verified',
      record: found,
      payload,
      identity: { state: 'claimed', mismatches: [], attestation: null },
    })

    expect((await verifyLink(link(generatePayloadKey()), answering({ kind: 'found', record: found }))).kind).toBe(
      'key-mismatch',
    )
    expect(await verifyLink(link(undefined), answering({ kind: 'found', record: found }))).toMatchObject({
      kind: 'missing-key',
      malformed: false,
    })
    expect(await verifyLink(link(null), answering({ kind: 'found', record: found }))).toMatchObject({
      kind: 'missing-key',
      malformed: true,
    })
    const otherHash = record([entry(tx, ZERO_TX_HASH, hash('ee'))], encryptedPayload)
    expect(await verifyLink(link(key), answering({ kind: 'found', record: otherHash }))).toMatchObject({
      kind: 'tampered',
      reason: 'hash-mismatch',
    })
  })

  it('calls details that hash right but are no payload unreadable, and a chain that does not link up tampered', async () => {
    const { key, encryptedPayload, compositeHash: composite } = await sealed('{"hello":"world"}')
    const odd = record([entry(tx, ZERO_TX_HASH, composite)], encryptedPayload)
    expect((await verifyLink(link(key), answering({ kind: 'found', record: odd }))).kind).toBe('unreadable')
    const spliced = record([entry(tx, hash('07'), composite)], encryptedPayload)
    expect(await verifyLink(link(key), answering({ kind: 'found', record: spliced }))).toMatchObject({
      kind: 'tampered',
      reason: 'broken-chain',
    })
    const bare = record([entry(tx, ZERO_TX_HASH)], null)
    expect((await verifyLink(link(key), answering({ kind: 'found', record: bare }))).kind).toBe('no-details')
    const erased = { ...bare, payloadErased: true }
    expect((await verifyLink(link(key), answering({ kind: 'found', record: erased }))).kind).toBe('erased')
  })

  it('passes the service’s other answers through, and asks nothing for a link without a hash', async () => {
    expect(await verifyLink(link(undefined), answering({ kind: 'not-found' }))).toEqual({
      kind: 'not-found',
      txHash: tx,
    })
    expect(await verifyLink(link(undefined), answering({ kind: 'invalid-id' }))).toEqual({ kind: 'invalid-link' })
    expect(await verifyLink(link(undefined), answering({ kind: 'unavailable', reason: 'chain' }))).toEqual({
      kind: 'unavailable',
      reason: 'chain',
    })
    const refusing: ApiClient = {
      verify: () => Promise.reject(new Error('must not be called')),
      info: async () => undefined,
      successorPage: async () => undefined,
    }
    expect(await verifyLink({ txHash: undefined, key: undefined }, refusing)).toEqual({ kind: 'invalid-link' })
  })
})

describe('createApiClient', () => {
  const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
    new Response(JSON.stringify({ type: 'about:blank', title: 't', status, detail: 'd', code }), {
      status,
      headers: { 'content-type': 'application/problem+json', ...headers },
    })
  const client = (response: () => Response | Promise<Response>) =>
    createApiClient('https://api.example.com', async () => response())

  it('classifies every answer of GET /api/verify', async () => {
    expect(await client(() => problem(404, 'ANCHOR_NOT_FOUND')).verify(ZERO_TX_HASH)).toEqual({ kind: 'not-found' })
    // A 404 of another kind means the API is not where the page looks: not "no such signature".
    expect(await client(() => problem(404, 'NOT_FOUND')).verify(ZERO_TX_HASH)).toEqual({
      kind: 'unavailable',
      reason: 'server',
    })
    expect(await client(() => problem(400, 'VALIDATION_FAILED')).verify(ZERO_TX_HASH)).toEqual({ kind: 'invalid-id' })
    expect(await client(() => problem(502, 'CHAIN_UNAVAILABLE')).verify(ZERO_TX_HASH)).toEqual({
      kind: 'unavailable',
      reason: 'chain',
    })
    expect(await client(() => problem(429, 'RATE_LIMITED', { 'retry-after': '17' })).verify(ZERO_TX_HASH)).toEqual({
      kind: 'unavailable',
      reason: 'busy',
      retryAfterSeconds: 17,
    })
    expect(await client(() => problem(422, 'CHAIN_TOO_DEEP')).verify(ZERO_TX_HASH)).toEqual({
      kind: 'unavailable',
      reason: 'too-deep',
    })
    expect(await client(() => new Response('{"txHash":1}', { status: 200 })).verify(ZERO_TX_HASH)).toEqual({
      kind: 'unavailable',
      reason: 'server',
    })
    expect(
      await client(() => {
        throw new TypeError('Failed to fetch')
      }).verify(ZERO_TX_HASH),
    ).toEqual({ kind: 'unavailable', reason: 'network' })
  })

  it('reads GET /api/info, and gives up quietly when it cannot', async () => {
    const info = {
      chainId: 8453,
      contractAddress: RELAYER,
      relayers: [],
      publicRpcUrl: null,
      explorerTxUrl: null,
      verifyBaseUrl: 'https://verify.example.com',
      pdfSigning: {
        certificates: ['-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n'],
        ocspUrl: 'https://anchors.example/ca/ocsp',
        crlUrl: 'https://anchors.example/ca/crl',
        timestampCertificates: ['-----BEGIN CERTIFICATE-----\nMIIC\n-----END CERTIFICATE-----\n'],
      },
      version: '1',
    }
    expect(await client(() => Response.json(info)).info()).toEqual({
      chainId: 8453,
      contractAddress: RELAYER,
      explorerTxUrl: null,
      pdfCertificates: { service: info.pdfSigning.certificates, timestamps: info.pdfSigning.timestampCertificates },
    })
    expect(await client(() => new Response('nope', { status: 500 })).info()).toBeUndefined()
  })
})
