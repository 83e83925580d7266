import { describe, expect, it } from 'vitest'
import {
  type AnchorPayload,
  assertFitsQrBudget,
  buildAnchorPayload,
  generateSalt,
  parseAnchorPayload,
  serializeAnchorPayload,
  trustFromJwtClaims,
  validateAnchorPayload,
} from '../../src/formats/anchor-payload.ts'
import { QR_CIPHERTEXT_LIMIT } from '../../src/formats/constants.ts'
import { FormatError, InvalidPayloadError, PayloadTooLargeError } from '../../src/formats/errors.ts'
import { fromHex } from '../../src/formats/hex.ts'
import { encryptPayload, generatePayloadKey } from '../../src/formats/payload-cipher.ts'

const D = 'f35efb19fdb382572e3271363516e989c5179a0a7c859e26e4e7fe1b5568217f'
const SALT = '51c76b7890a05aabbda25a5b119300938a4e407a7329c0190abdc35ea5bf51c2'

function payload(
  overrides: Record<string, unknown> = {},
  signer: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    d: D,
    s: {
      t: 'company',
      n: 'Grace Hopper',
      e: 'grace@navy.example',
      c: 'ACME',
      p: 'CTO',
      tr: 'google',
      v: true,
      ...signer,
    },
    ts: 1763701234,
    g: { la: 52.520008, ln: 13.404954 },
    salt: SALT,
    ...overrides,
  }
}

function failure(value: unknown): InvalidPayloadError {
  try {
    validateAnchorPayload(value)
  } catch (error) {
    if (error instanceof InvalidPayloadError) return error
    throw error
  }
  throw new Error('validation passed')
}

const utf8Length = (text: string) => new TextEncoder().encode(text).length

describe('validateAnchorPayload', () => {
  it('accepts a complete payload and returns it unchanged in canonical key order', () => {
    const shuffled = { salt: SALT, g: { ln: 13.404954, la: 52.520008 }, ts: 1763701234, s: payload().s, d: D }
    const result = validateAnchorPayload(shuffled)
    expect(result).toEqual(payload())
    expect(Object.keys(result)).toEqual(['d', 's', 'ts', 'g', 'salt'])
    expect(Object.keys(result.s)).toEqual(['t', 'n', 'e', 'c', 'p', 'tr', 'v'])
    expect(Object.keys(result.g!)).toEqual(['la', 'ln'])
  })

  it('drops empty c, p and tr and keeps v false', () => {
    const result = validateAnchorPayload(payload({}, { c: '', p: '', tr: '', v: false }))
    expect(result.s).toStrictEqual({ t: 'company', n: 'Grace Hopper', e: 'grace@navy.example', v: false })
  })

  it('makes a negative zero coordinate zero', () => {
    const result = validateAnchorPayload(payload({ g: { la: -0, ln: -0 } }))
    expect(Object.is(result.g!.la, 0)).toBe(true)
    expect(Object.is(result.g!.ln, 0)).toBe(true)
  })

  it('throws an InvalidPayloadError with a stable code, the field and the reason', () => {
    const error = failure(payload({}, { e: 'nope' }))
    expect(error).toBeInstanceOf(FormatError)
    expect(error.code).toBe('ERR_INVALID_PAYLOAD')
    expect(error.name).toBe('InvalidPayloadError')
    expect(error.field).toBe('s.e')
    expect(error.reason).toBe('not a valid e-mail address')
    expect(error.message).toBe('s.e: not a valid e-mail address')
  })

  it('lists every issue, not only the first', () => {
    const error = failure(payload({ ts: -1, salt: 'x' }, { n: '' }))
    expect(error.issues.map((issue) => issue.field)).toEqual(['s.n', 'ts', 'salt'])
  })

  it.each([
    ['an array', [], 'payload: expected an object, got an array'],
    ['null', null, 'payload: expected an object, got null'],
    ['a string', '{}', 'payload: expected an object, got a string'],
  ])('rejects %s', (_, value, message) => {
    expect(failure(value).message).toBe(message)
  })

  it.each([
    ['d', payload({ d: undefined }), 'd: is required'],
    ['s', payload({ s: undefined }), 's: is required'],
    ['s.t', payload({}, { t: undefined }), 's.t: is required'],
    ['s.n', payload({}, { n: undefined }), 's.n: is required'],
    ['s.e', payload({}, { e: undefined }), 's.e: is required'],
    ['ts', payload({ ts: undefined }), 'ts: is required'],
    ['salt', payload({ salt: undefined }), 'salt: is required'],
    ['g.la', payload({ g: { ln: 1 } }), 'g.la: is required'],
    ['g.ln', payload({ g: { la: 1 } }), 'g.ln: is required'],
  ])('requires %s', (_, value, message) => {
    expect(failure(value).message).toBe(message)
  })

  it.each([
    ['63 characters', D.slice(1)],
    ['65 characters', `${D}0`],
    ['a 0x prefix', `0x${D.slice(2)}`],
    ['a non-hex digit', `g${D.slice(1)}`],
  ])('rejects a d of %s', (_, d) => {
    expect(failure(payload({ d })).message).toBe('d: must be the SHA-256 of the document: 64 hex characters')
  })

  it.each(['person', 'Individual', ''])('rejects the signer type %j', (t) => {
    expect(failure(payload({}, { t })).message).toBe('s.t: must be one of individual, company')
  })

  it.each([
    ['empty', ''],
    ['only spaces', '   '],
    ['only a tab and a newline', '\t\n'],
  ])('rejects a name that is %s', (_, n) => {
    expect(failure(payload({}, { n })).message).toBe('s.n: must not be empty')
  })

  it.each([
    ['s.n', { n: 'Ada \uD800' }],
    ['s.c', { c: '\uDC00 Ltd' }],
    ['s.p', { p: 'Chief \uD83D' }],
  ])('rejects an unpaired surrogate in %s', (field, signer) => {
    expect(failure(payload({}, signer)).message).toBe(`${field}: contains an unpaired UTF-16 surrogate`)
  })

  it.each([
    ['s.n', { n: 42 }, 'expected a string, got a number'],
    ['s.c', { c: null }, 'expected a string, got null'],
    ['s.p', { p: ['CTO'] }, 'expected a string, got an array'],
    ['s.v', { v: 'true' }, 'expected a boolean, got a string'],
    ['s.e', { e: 7 }, 'expected a string, got a number'],
  ])('rejects a wrongly typed %s', (field, signer, reason) => {
    expect(failure(payload({}, signer)).message).toBe(`${field}: ${reason}`)
  })

  it.each([
    'plainaddress',
    'ada@example',
    '@example.com',
    'ada@',
    'ada lovelace@example.com',
    'ada@exa mple.com',
    '.ada@example.com',
    'ada.@example.com',
    'ada..lovelace@example.com',
    'ada@-example.com',
    'ada@example-.com',
    'ada@example..com',
    'ada@.example.com',
    'ada@example.com.',
    'ada@@example.com',
    '"ada"@example.com',
    'ada@[192.0.2.1]',
    'ada@exam_ple.com',
    `${'a'.repeat(65)}@example.com`,
    `${'ü'.repeat(33)}@example.com`,
    `ada@${'a'.repeat(64)}.com`,
    'ada\n@example.com',
    'ada@example.com\u200b',
  ])('rejects the e-mail address %j', (e) => {
    expect(failure(payload({}, { e })).message).toBe('s.e: not a valid e-mail address')
  })

  it.each([
    'ada@example.com',
    'zoe+sign@example.org',
    "o'brien@example.ie",
    'first.last@sub.example.co.uk',
    'x@a-b.io',
    "!#$%&'*+/=?^_`{|}~-@example.com",
    'zoë@exämple.de',
    '山田@例え.jp',
    'user@xn--bcher-kva.example',
    `${'a'.repeat(64)}@example.com`,
  ])('accepts the e-mail address %j', (e) => {
    expect(validateAnchorPayload(payload({}, { e })).s.e).toBe(e)
  })

  it.each(['github', 'Email', 'apple'])('rejects the trust anchor %j', (tr) => {
    expect(failure(payload({}, { tr })).message).toBe('s.tr: must be one of email, google, microsoft')
  })

  it.each([
    [-1, 'ts: must not be negative'],
    [1.5, 'ts: must be a whole number of seconds'],
    [253402300800, 'ts: must be before the year 10000'],
    ['1763701234', 'ts: expected a number, got a string'],
    [Number.NaN, 'ts: expected a number, got NaN'],
  ])('rejects the timestamp %j', (ts, message) => {
    expect(failure(payload({ ts })).message).toBe(message)
  })

  it.each([0, 253402300799])('accepts the timestamp %j', (ts) => {
    expect(validateAnchorPayload(payload({ ts })).ts).toBe(ts)
  })

  it.each([
    [{ la: 90.000001, ln: 0 }, 'g.la: latitude must be between -90 and 90'],
    [{ la: -90.000001, ln: 0 }, 'g.la: latitude must be between -90 and 90'],
    [{ la: 0, ln: 180.000001 }, 'g.ln: longitude must be between -180 and 180'],
    [{ la: 0, ln: -180.000001 }, 'g.ln: longitude must be between -180 and 180'],
    [{ la: Number.POSITIVE_INFINITY, ln: 0 }, 'g.la: expected a number, got Infinity'],
    [{ la: 0, ln: Number.NaN }, 'g.ln: expected a number, got NaN'],
    [{ la: '52.5', ln: 0 }, 'g.la: expected a number, got a string'],
  ])('rejects the coordinates %j', (g, message) => {
    expect(failure(payload({ g })).message).toBe(message)
  })

  it.each([
    { la: 90, ln: 180 },
    { la: -90, ln: -180 },
  ])('accepts the coordinates at the bounds %j', (g) => {
    expect(validateAnchorPayload(payload({ g })).g).toEqual(g)
  })

  it('rejects a null g (absent is written by leaving it out)', () => {
    expect(failure(payload({ g: null })).message).toBe('g: expected an object, got null')
  })

  it.each([
    ['63 characters', SALT.slice(1)],
    ['a non-hex digit', `${SALT.slice(1)}z`],
    ['an empty string', ''],
  ])('rejects a salt of %s', (_, salt) => {
    expect(failure(payload({ salt })).message).toBe('salt: must be 32 random bytes: 64 hex characters')
  })

  it.each([
    ['x', payload({ x: 1 })],
    ['s.x', payload({}, { x: 1 })],
    ['g.alt', payload({ g: { la: 1, ln: 2, alt: 3 } })],
  ])('rejects the unknown field %s', (field, value) => {
    expect(failure(value).message).toBe(`${field}: unknown field`)
  })
})

describe('serializeAnchorPayload', () => {
  it('writes compact JSON in the canonical key order', () => {
    expect(serializeAnchorPayload(payload() as unknown as AnchorPayload)).toBe(
      `{"d":"${D}","s":{"t":"company","n":"Grace Hopper","e":"grace@navy.example","c":"ACME","p":"CTO","tr":"google","v":true},"ts":1763701234,"g":{"la":52.520008,"ln":13.404954},"salt":"${SALT}"}`,
    )
  })

  it('omits empty c, p and tr, and absent v and g', () => {
    const minimal = payload({ g: undefined }, { c: '', p: '', tr: '', v: undefined }) as unknown as AnchorPayload
    expect(serializeAnchorPayload(minimal)).toBe(
      `{"d":"${D}","s":{"t":"company","n":"Grace Hopper","e":"grace@navy.example"},"ts":1763701234,"salt":"${SALT}"}`,
    )
  })

  it('writes non-ASCII characters as themselves and escapes quotes and backslashes', () => {
    const serialized = serializeAnchorPayload(
      payload({}, { n: 'Zoë 山田 🖋 \u200f', c: 'A "B" \\ C' }) as unknown as AnchorPayload,
    )
    expect(serialized).toContain('"n":"Zoë 山田 🖋 \u200f"')
    expect(serialized).toContain('"c":"A \\"B\\" \\\\ C"')
  })

  it.each([
    ['n', 'line\nbreak', 'U+000A'],
    ['n', 'Ada\u001b[2K', 'U+001B'],
    ['c', 'Acme\u0085', 'U+0085'],
    ['p', 'CEO \u202eOEC', 'U+202E'],
    ['p', 'CEO \u2067x', 'U+2067'],
  ])('refuses to serialize a new payload whose s.%s holds %j', (field, value, codePoint) => {
    expect(() => serializeAnchorPayload(payload({}, { [field]: value }) as unknown as AnchorPayload)).toThrow(
      `s.${field}: contains ${codePoint}, a control or bidirectional formatting character`,
    )
  })

  it('reads a payload that holds such characters, written escaped the way JSON.stringify writes them', () => {
    const old = validateAnchorPayload(payload({}, { n: 'Ada\u001b[2K', p: 'line\nbreak\u0001 \u202e' }))
    const serialized = JSON.stringify(old)
    expect(serialized).toContain('"n":"Ada\\u001b[2K"')
    expect(serialized).toContain('"p":"line\\nbreak\\u0001 \u202e"')
    expect(parseAnchorPayload(serialized)).toStrictEqual(old)
  })

  it.each([
    [52.520008, '52.520008'],
    [-33.8688, '-33.8688'],
    [52, '52'],
    [0.1 + 0.2, '0.30000000000000004'],
    [1e-7, '1e-7'],
  ])('writes the coordinate %s as ECMAScript prints it: %s', (la, text) => {
    expect(serializeAnchorPayload(payload({ g: { la, ln: 0 } }) as unknown as AnchorPayload)).toContain(
      `"g":{"la":${text},"ln":0}`,
    )
  })

  it('refuses to serialize an invalid payload', () => {
    expect(() => serializeAnchorPayload(payload({ ts: -5 }) as unknown as AnchorPayload)).toThrow(
      'ts: must not be negative',
    )
  })
})

describe('parseAnchorPayload', () => {
  const canonical = serializeAnchorPayload(payload() as unknown as AnchorPayload)

  it('parses canonical text', () => {
    expect(parseAnchorPayload(canonical)).toEqual(payload())
  })

  it.each(['', '{', 'null x', "{'d':1}"])('rejects text that is not JSON: %j', (text) => {
    expect(() => parseAnchorPayload(text)).toThrow('payload: not valid JSON')
  })

  it.each([
    ['spaces', canonical.replace('"ts":', '"ts": ')],
    ['another key order', canonical.replace(`"d":"${D}","s":`, '"s":').replace(',"ts"', `,"d":"${D}","ts"`)],
    [
      'an empty optional field',
      canonical.replace('"p":"CTO"', '"p":"CTO","tr":"google","c":""').replace(',"tr":"google","v"', ',"v"'),
    ],
    ['a duplicate key', canonical.replace('"ts":1763701234', '"ts":1,"ts":1763701234')],
    ['another number spelling', canonical.replace('52.520008', '52.5200080')],
    [
      'an escaped non-ASCII character',
      serializeAnchorPayload(payload({}, { n: 'Zoë' }) as unknown as AnchorPayload).replace('ë', '\\u00eb'),
    ],
    ['a trailing newline', `${canonical}\n`],
  ])('rejects non-canonical text with %s', (_, text) => {
    expect(() => parseAnchorPayload(text)).toThrow(
      'payload: not in canonical form (key order, spacing, empty fields or number spelling)',
    )
  })

  it('accepts non-canonical text when asked to', () => {
    expect(parseAnchorPayload(canonical.replace('"ts":', '"ts": '), { requireCanonical: false })).toEqual(payload())
  })

  it('applies every validation rule', () => {
    expect(() => parseAnchorPayload(canonical.replace('"company"', '"person"'))).toThrow(
      's.t: must be one of individual, company',
    )
  })
})

describe('buildAnchorPayload', () => {
  const input = {
    documentHash: D,
    signer: { type: 'individual' as const, name: 'Ada Lovelace', email: 'ada@example.com' },
    timestamp: 1763700000,
  }

  it('generates a fresh 64-hex salt for every payload', () => {
    const a = buildAnchorPayload(input)
    const b = buildAnchorPayload(input)
    expect(a.salt).toMatch(/^[0-9a-f]{64}$/)
    expect(a.salt).not.toBe(b.salt)
  })

  it('uses the given salt', () => {
    expect(buildAnchorPayload({ ...input, salt: SALT }).salt).toBe(SALT)
  })

  it('turns a Date into whole Unix seconds', () => {
    expect(buildAnchorPayload({ ...input, timestamp: new Date('2025-11-21T04:40:00.999Z') }).ts).toBe(1763700000)
  })

  it('rejects an invalid Date', () => {
    expect(() => buildAnchorPayload({ ...input, timestamp: new Date('nope') })).toThrow(
      'ts: expected a number, got NaN',
    )
  })

  it('maps the readable input to the short keys and leaves null options out', () => {
    const built = buildAnchorPayload({
      ...input,
      signer: { ...input.signer, company: null, position: 'Analyst', trust: null, verified: null },
      geo: { latitude: 51.5, longitude: -0.12 },
      salt: SALT,
    })
    expect(built).toStrictEqual({
      d: D,
      s: { t: 'individual', n: 'Ada Lovelace', e: 'ada@example.com', p: 'Analyst' },
      ts: 1763700000,
      g: { la: 51.5, ln: -0.12 },
      salt: SALT,
    })
  })

  it('names the short key of an invalid field', () => {
    expect(() => buildAnchorPayload({ ...input, signer: { ...input.signer, email: 'ada' } })).toThrow(
      's.e: not a valid e-mail address',
    )
  })

  // 1508 serialized bytes give 12 + 1508 + 16 = 1536 bytes, exactly 2048 base64url characters.
  const withCompanyOfBytes = (bytes: number) => {
    const base = serializeAnchorPayload(
      buildAnchorPayload({ ...input, salt: SALT, signer: { ...input.signer, company: 'x' } }),
    )
    return { ...input, salt: SALT, signer: { ...input.signer, company: 'x'.repeat(1 + bytes - utf8Length(base)) } }
  }

  it('accepts a payload that fills the QR budget exactly', async () => {
    const built = buildAnchorPayload(withCompanyOfBytes(1508))
    const serialized = serializeAnchorPayload(built)
    expect(utf8Length(serialized)).toBe(1508)
    expect(await encryptPayload(serialized, generatePayloadKey())).toHaveLength(QR_CIPHERTEXT_LIMIT)
  })

  it('rejects a payload one byte over the QR budget, saying so clearly', () => {
    expect(() => buildAnchorPayload(withCompanyOfBytes(1509))).toThrow(
      'payload too large for the QR budget: 2050 characters, limit 2048',
    )
  })

  it('counts UTF-8 bytes, not characters, against the budget', () => {
    // 600 three-byte characters: 1,800 bytes, far over the budget though only 600 characters long.
    try {
      buildAnchorPayload({ ...input, signer: { ...input.signer, company: '山'.repeat(600) } })
      expect.unreachable()
    } catch (error) {
      expect(error).toBeInstanceOf(PayloadTooLargeError)
      expect((error as PayloadTooLargeError).code).toBe('ERR_PAYLOAD_TOO_LARGE')
      expect((error as PayloadTooLargeError).limit).toBe(2048)
      expect((error as PayloadTooLargeError).length).toBeGreaterThan(2048)
    }
  })
})

describe('assertFitsQrBudget', () => {
  it('accepts 1508 bytes and rejects 1509', () => {
    expect(() => assertFitsQrBudget('a'.repeat(1508))).not.toThrow()
    expect(() => assertFitsQrBudget('a'.repeat(1509))).toThrow(PayloadTooLargeError)
  })
})

describe('generateSalt', () => {
  it('gives 32 random bytes as lowercase hex', () => {
    const salt = generateSalt()
    expect(fromHex(salt)).toHaveLength(32)
    expect(salt).toMatch(/^[0-9a-f]{64}$/)
    expect(generateSalt()).not.toBe(salt)
  })
})

describe('trustFromJwtClaims', () => {
  it('reads trust and verified and ignores other claims', () => {
    const claims = { trust: 'microsoft', verified: true, sub: 'u1', exp: 1 }
    expect(trustFromJwtClaims(claims)).toStrictEqual({
      trust: 'microsoft',
      verified: true,
    })
  })

  it('leaves absent claims absent', () => {
    expect(trustFromJwtClaims({})).toStrictEqual({})
    expect(trustFromJwtClaims({ verified: false })).toStrictEqual({ verified: false })
  })

  it('fills s.tr and s.v through the builder', () => {
    const built = buildAnchorPayload({
      documentHash: D,
      signer: {
        type: 'individual',
        name: 'Ada',
        email: 'ada@example.com',
        ...trustFromJwtClaims({ trust: 'email', verified: true }),
      },
      timestamp: 0,
      salt: SALT,
    })
    expect(serializeAnchorPayload(built)).toContain('"tr":"email","v":true}')
  })

  it.each(['github', 1, null, ''])('rejects the trust claim %j', (trust) => {
    expect(() => trustFromJwtClaims({ trust })).toThrow(
      's.tr: JWT claim "trust" must be one of email, google, microsoft',
    )
  })

  it.each(['true', 1, null])('rejects the verified claim %j', (verified) => {
    expect(() => trustFromJwtClaims({ verified })).toThrow('s.v: JWT claim "verified" must be a boolean')
  })
})
