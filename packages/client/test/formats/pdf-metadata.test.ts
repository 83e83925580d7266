import { describe, expect, it } from 'vitest'
import { type AnchorPayload, serializeAnchorPayload } from '../../src/formats/anchor-payload.ts'
import { hashAnchorPayload } from '../../src/formats/composite-hash.ts'
import { InvalidMetadataError } from '../../src/formats/errors.ts'
import {
  isoTimestampFromUnix,
  type PdfSignature,
  parsePdfMetadata,
  readPdfMetadata,
  rebuildPayloadFromMetadata,
  signatureFromPayload,
  writePdfMetadata,
} from '../../src/formats/pdf-metadata.ts'

const TX = '0xda85dbaff996186d618f81484679795a57dcc71d1560075d8e458d2203b8b12e'
const QR = 'https://verify.example.com/v/2oXbr_mWGG1hj4FIRnl5Wlfcxx0VYAddjkWNIgO4sS4#6vXnz-BAh3tSl8It3Tpkvg'
const COMPOSITE = '0x6a492845206777c1ad3fda2e9419d25c6bf4160272277216f51157451330c4e6'
const CONTRACT = '0x5FbDB2315678afecb367f032d93F642f64180aa3'

const PAYLOAD: AnchorPayload = {
  d: '168f3f49fd78a70aa0e7b2a4317b9131e64d91ccc686410aa41336c939684ae9',
  s: {
    t: 'company',
    n: 'Grace Hopper',
    e: 'grace@navy.example',
    c: 'Example Corp GmbH',
    p: 'Rear Admiral',
    tr: 'google',
    v: true,
  },
  ts: 1763701234,
  g: { la: 52.520008, ln: 13.404954 },
  salt: '87644eef33a22bc6130b71356b1624800288b9a598e48a946aa6d03abb142037',
}

const SIGNATURE: PdfSignature = {
  signer_name: 'Grace Hopper',
  signer_email: 'grace@navy.example',
  signer_type: 'company',
  company: 'Example Corp GmbH',
  position: 'Rear Admiral',
  timestamp: '2025-11-21T05:00:34Z',
  doc_hash: PAYLOAD.d,
  composite_hash: COMPOSITE,
  tx_hash: TX,
  qr_url: QR,
  salt: PAYLOAD.salt,
  geo: [52.520008, 13.404954],
  trust: 'google',
  verified: true,
  chain_id: 31337,
  contract_address: CONTRACT,
}

const V1_SIGNATURE = {
  signer_name: 'Grace Hopper',
  signer_email: 'grace@navy.example',
  timestamp: '2025-11-21T05:00:34Z',
  doc_hash: PAYLOAD.d,
  composite_hash: COMPOSITE,
  tx_hash: TX,
}

const v2 = (signature: Record<string, unknown>) => ({ version: 2, signatures: [{ ...SIGNATURE, ...signature }] })

function metadataError(action: () => unknown): InvalidMetadataError {
  try {
    action()
  } catch (error) {
    if (error instanceof InvalidMetadataError) return error
    throw error
  }
  throw new Error('no error')
}

async function rejection(promise: Promise<unknown>): Promise<InvalidMetadataError> {
  try {
    await promise
  } catch (error) {
    if (error instanceof InvalidMetadataError) return error
    throw error
  }
  throw new Error('no error')
}

describe('isoTimestampFromUnix', () => {
  it.each([
    [0, '1970-01-01T00:00:00Z'],
    [1763700000, '2025-11-21T04:40:00Z'],
    [253402300799, '9999-12-31T23:59:59Z'],
  ])('writes %i as %s', (seconds, iso) => {
    expect(isoTimestampFromUnix(seconds)).toBe(iso)
  })

  it.each([-1, 1.5, 253402300800, Number.NaN])('rejects %s', (seconds) => {
    expect(() => isoTimestampFromUnix(seconds)).toThrow('timestamp: must be whole seconds from 1970 to 9999')
  })
})

describe('signatureFromPayload', () => {
  it('carries every payload field, extension fields included', () => {
    const signature = signatureFromPayload(PAYLOAD, {
      compositeHash: COMPOSITE,
      txHash: TX,
      qrUrl: QR,
      chainId: 31337,
      contractAddress: CONTRACT,
    })
    expect(signature).toStrictEqual(SIGNATURE)
  })

  it('writes absent optional payload fields as null and leaves absent extensions out', () => {
    const signature = signatureFromPayload(
      { d: PAYLOAD.d, s: { t: 'individual', n: 'Ada', e: 'ada@example.com' }, ts: 0, salt: PAYLOAD.salt },
      { compositeHash: COMPOSITE, txHash: TX, qrUrl: null },
    )
    expect(signature).toStrictEqual({
      signer_name: 'Ada',
      signer_email: 'ada@example.com',
      signer_type: 'individual',
      company: null,
      position: null,
      timestamp: '1970-01-01T00:00:00Z',
      doc_hash: PAYLOAD.d,
      composite_hash: COMPOSITE,
      tx_hash: TX,
      qr_url: null,
      salt: PAYLOAD.salt,
      geo: null,
    })
  })

  it('rejects anchoring details that do not fit the schema', () => {
    expect(
      metadataError(() => signatureFromPayload(PAYLOAD, { compositeHash: 'abc', txHash: TX, qrUrl: QR })).message,
    ).toBe('composite_hash: must be a composite hash: 0x followed by 64 hex characters')
  })
})

describe('writePdfMetadata', () => {
  it('writes version 2 with fields in the specification order and extension fields last', () => {
    expect(writePdfMetadata({ signatures: [SIGNATURE] })).toBe(
      `{"version":2,"signatures":[{"signer_name":"Grace Hopper","signer_email":"grace@navy.example","signer_type":"company","company":"Example Corp GmbH","position":"Rear Admiral","timestamp":"2025-11-21T05:00:34Z","doc_hash":"${PAYLOAD.d}","composite_hash":"${COMPOSITE}","tx_hash":"${TX}","qr_url":"${QR}","salt":"${PAYLOAD.salt}","geo":[52.520008,13.404954],"trust":"google","verified":true,"chain_id":31337,"contract_address":"${CONTRACT}"}]}`,
    )
  })

  it('writes version 2 even for a document read from version 1', () => {
    const written = JSON.parse(writePdfMetadata(parsePdfMetadata({ version: 1, signatures: [V1_SIGNATURE] })))
    expect(written.version).toBe(2)
    expect(written.signatures[0].signer_type).toBe('individual')
  })

  it('leaves out fields it does not know', () => {
    const written = writePdfMetadata({ signatures: [{ ...SIGNATURE, secret: 'x' } as PdfSignature] })
    expect(written).not.toContain('secret')
  })

  it('writes an empty signature list', () => {
    expect(writePdfMetadata({ signatures: [] })).toBe('{"version":2,"signatures":[]}')
  })

  it('refuses to write an invalid signature, naming it', () => {
    expect(
      metadataError(() => writePdfMetadata({ signatures: [SIGNATURE, { ...SIGNATURE, salt: 'x' }] })).message,
    ).toBe('signatures[1].salt: must be 32 random bytes: 64 hex characters')
  })
})

describe('parsePdfMetadata', () => {
  it('reads version 2 unchanged', () => {
    expect(parsePdfMetadata(v2({}))).toStrictEqual({ version: 2, signatures: [SIGNATURE] })
  })

  it('reads version 2 without the extension fields', () => {
    const { trust, verified, chain_id, contract_address, ...plain } = SIGNATURE
    expect(parsePdfMetadata({ version: 2, signatures: [plain] }).signatures[0]).toStrictEqual(plain)
  })

  it('ignores fields it does not know, in the document and in signatures', () => {
    const read = parsePdfMetadata({ ...v2({ future_field: 1 }), producer: 'x' })
    expect(read).toStrictEqual({ version: 2, signatures: [SIGNATURE] })
  })

  it('reads version 1 with the version 2 defaults', () => {
    expect(parsePdfMetadata({ version: 1, signatures: [V1_SIGNATURE] }).signatures[0]).toStrictEqual({
      signer_name: 'Grace Hopper',
      signer_email: 'grace@navy.example',
      signer_type: 'individual',
      company: null,
      position: null,
      timestamp: '2025-11-21T05:00:34Z',
      doc_hash: PAYLOAD.d,
      composite_hash: COMPOSITE,
      tx_hash: TX,
      qr_url: null,
      salt: null,
      geo: null,
    })
  })

  it('validates version 1 fields too', () => {
    expect(
      metadataError(() => parsePdfMetadata({ version: 1, signatures: [{ ...V1_SIGNATURE, signer_email: 'x' }] }))
        .message,
    ).toBe('signatures[0].signer_email: not a valid e-mail address')
    expect(
      metadataError(() => parsePdfMetadata({ version: 1, signatures: [{ ...V1_SIGNATURE, tx_hash: undefined }] }))
        .message,
    ).toBe('signatures[0].tx_hash: is required')
  })

  it('throws an InvalidMetadataError with a stable code', () => {
    const error = metadataError(() => parsePdfMetadata(v2({ salt: 1 })))
    expect(error.code).toBe('ERR_INVALID_METADATA')
    expect(error.field).toBe('signatures[0].salt')
    expect(error.reason).toBe('expected a string, got a number')
  })

  it.each([
    ['an array', [], 'metadata: expected an object'],
    ['null', null, 'metadata: expected an object'],
    ['no version', { signatures: [] }, 'version: is required'],
    ['version 3', { version: 3, signatures: [] }, 'version: unsupported version; this reader knows 1 and 2'],
    ['version "2"', { version: '2', signatures: [] }, 'version: unsupported version; this reader knows 1 and 2'],
    ['no signatures', { version: 2 }, 'signatures: is required'],
    ['signatures as an object', { version: 2, signatures: {} }, 'signatures: expected an array, got an object'],
  ])('rejects %s', (_, value, message) => {
    expect(metadataError(() => parsePdfMetadata(value)).message).toBe(message)
  })

  it.each([
    ['signer_name', { signer_name: ' ' }, 'must not be empty'],
    ['signer_email', { signer_email: 'grace' }, 'not a valid e-mail address'],
    ['signer_type', { signer_type: 'person' }, 'must be one of individual, company'],
    ['company', { company: 5 }, 'expected a string, got a number'],
    ['position', { position: '\uD800' }, 'contains an unpaired UTF-16 surrogate'],
    [
      'timestamp',
      { timestamp: '2025-11-21 05:00:34Z' },
      'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
    ],
    [
      'timestamp',
      { timestamp: '2025-11-21T05:00:34+01:00' },
      'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
    ],
    [
      'timestamp',
      { timestamp: '2025-11-21T05:00:34' },
      'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
    ],
    [
      'timestamp',
      { timestamp: '2025-02-29T00:00:00Z' },
      'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
    ],
    [
      'timestamp',
      { timestamp: '2025-11-21T24:00:00Z' },
      'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
    ],
    ['timestamp', { timestamp: 1763701234 }, 'expected a string, got a number'],
    ['doc_hash', { doc_hash: `0x${PAYLOAD.d}` }, 'must be the SHA-256 of the document: 64 hex characters'],
    [
      'composite_hash',
      { composite_hash: COMPOSITE.slice(2) },
      'must be a composite hash: 0x followed by 64 hex characters',
    ],
    ['tx_hash', { tx_hash: TX.slice(0, -1) }, 'must be a transaction hash: 0x followed by 64 hex characters'],
    [
      'qr_url',
      { qr_url: 'https://verify.example.com/' },
      'not a valid QR URL ({verifyBaseUrl}/v/<43 base64url>#<22 base64url>)',
    ],
    ['qr_url', { tx_hash: `0x${'00'.repeat(32)}` }, 'its transaction hash differs from tx_hash'],
    ['salt', { salt: '' }, 'must be 32 random bytes: 64 hex characters'],
    ['geo', { geo: [1] }, 'must be [latitude, longitude]'],
    ['geo', { geo: { la: 1, ln: 2 } }, 'must be [latitude, longitude]'],
    ['geo[0]', { geo: [91, 0] }, 'latitude must be between -90 and 90'],
    ['geo[1]', { geo: [0, -181] }, 'longitude must be between -180 and 180'],
    ['trust', { trust: 'github' }, 'must be one of email, google, microsoft'],
    ['verified', { verified: 'yes' }, 'expected a boolean, got a string'],
    ['chain_id', { chain_id: 0 }, 'must be a positive integer'],
    ['chain_id', { chain_id: 1.5 }, 'must be a positive integer'],
    ['contract_address', { contract_address: '0x1234' }, 'must be 0x followed by 40 hex characters'],
  ])('rejects an invalid %s: %j', (field, change, reason) => {
    expect(metadataError(() => parsePdfMetadata(v2(change))).message).toBe(`signatures[0].${field}: ${reason}`)
  })

  it.each(['signer_type', 'company', 'position', 'qr_url', 'salt', 'geo'])(
    'requires the version 2 field %s in version 2 documents',
    (field) => {
      const signature: Record<string, unknown> = { ...SIGNATURE }
      delete signature[field]
      expect(metadataError(() => parsePdfMetadata({ version: 2, signatures: [signature] })).message).toBe(
        `signatures[0].${field}: is required`,
      )
    },
  )

  it.each(['2024-02-29T00:00:00Z', '0050-06-15T12:00:00Z', '2025-11-21T05:00:34.5Z', '2025-11-21T05:00:34.123456789Z'])(
    'accepts the timestamp %s',
    (timestamp) => {
      expect(parsePdfMetadata(v2({ timestamp })).signatures[0]!.timestamp).toBe(timestamp)
    },
  )

  it('accepts a QR URL whose transaction hash differs only in case', () => {
    expect(() => parsePdfMetadata(v2({ tx_hash: TX.toUpperCase().replace('0X', '0x') }))).not.toThrow()
  })
})

describe('readPdfMetadata', () => {
  it('reads JSON text', () => {
    expect(readPdfMetadata(JSON.stringify(v2({})))).toStrictEqual({ version: 2, signatures: [SIGNATURE] })
  })

  it('rejects text that is not JSON', () => {
    expect(metadataError(() => readPdfMetadata('{version:2}')).message).toBe('metadata: not valid JSON')
  })
})

describe('rebuildPayloadFromMetadata', () => {
  it('rebuilds the payload, its bytes and its composite hash', async () => {
    const rebuilt = await rebuildPayloadFromMetadata(SIGNATURE)
    expect(rebuilt.payload).toStrictEqual(PAYLOAD)
    expect(rebuilt.serialized).toBe(serializeAnchorPayload(PAYLOAD))
    expect(rebuilt.compositeHash).toBe(await hashAnchorPayload(PAYLOAD))
    expect(rebuilt.compositeHash).toBe(COMPOSITE)
    expect(rebuilt.matchesMetadata).toBe(true)
  })

  it('compares with the recorded composite hash case-insensitively', async () => {
    const upper = `0x${COMPOSITE.slice(2).toUpperCase()}`
    expect((await rebuildPayloadFromMetadata({ ...SIGNATURE, composite_hash: upper })).matchesMetadata).toBe(true)
  })

  it.each([
    ['an edited name', { signer_name: 'Grace Hoper' }],
    ['an edited e-mail', { signer_email: 'grace@navy.example.org' }],
    ['an edited company', { company: 'Example Corp' }],
    ['a dropped position', { position: null }],
    ['an edited time', { timestamp: '2025-11-21T05:00:35Z' }],
    ['moved coordinates', { geo: [52.520009, 13.404954] }],
    ['a missing trust extension', { trust: undefined }],
    ['a missing verified extension', { verified: undefined }],
  ])('notices %s', async (_, change) => {
    const rebuilt = await rebuildPayloadFromMetadata({ ...SIGNATURE, ...change } as PdfSignature)
    expect(rebuilt.matchesMetadata).toBe(false)
    expect(rebuilt.compositeHash).not.toBe(COMPOSITE)
  })

  it('is not affected by the chain extension fields, which are not in the payload', async () => {
    const { chain_id, contract_address, ...rest } = SIGNATURE
    expect((await rebuildPayloadFromMetadata(rest)).compositeHash).toBe(COMPOSITE)
  })

  it('treats an empty company like a null one', async () => {
    const a = await rebuildPayloadFromMetadata({ ...SIGNATURE, company: '' })
    const b = await rebuildPayloadFromMetadata({ ...SIGNATURE, company: null })
    expect(a.serialized).toBe(b.serialized)
    expect(a.serialized).not.toContain('"c"')
  })

  it('accepts a timestamp with a zero fraction', async () => {
    expect((await rebuildPayloadFromMetadata({ ...SIGNATURE, timestamp: '2025-11-21T05:00:34.000Z' })).payload.ts).toBe(
      1763701234,
    )
  })

  it('refuses a version 1 signature, which has no salt', async () => {
    const [signature] = parsePdfMetadata({ version: 1, signatures: [V1_SIGNATURE] }).signatures
    expect((await rejection(rebuildPayloadFromMetadata(signature!))).message).toBe(
      'salt: is null, so the payload cannot be rebuilt (version 1 metadata has no salt)',
    )
  })

  it('refuses a timestamp with a fraction of a second', async () => {
    const error = await rejection(rebuildPayloadFromMetadata({ ...SIGNATURE, timestamp: '2025-11-21T05:00:34.5Z' }))
    expect(error.message).toBe('timestamp: has a fraction of a second, but the payload timestamp is whole seconds')
  })

  it.each(['1969-12-31T23:59:59Z', '0050-06-15T12:00:00Z'])(
    'refuses the timestamp %s, before 1970',
    async (timestamp) => {
      const error = await rejection(rebuildPayloadFromMetadata({ ...SIGNATURE, timestamp }))
      expect(error.message).toBe('timestamp: is before 1970, which the payload cannot hold')
    },
  )

  it('refuses an invalid signature, naming the metadata field', async () => {
    const error = await rejection(rebuildPayloadFromMetadata({ ...SIGNATURE, signer_email: 'x' }))
    expect(error.message).toBe('signer_email: not a valid e-mail address')
  })
})
