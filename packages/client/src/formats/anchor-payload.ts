// The anchor payload: the signer's identity and document data as short-key JSON, whose exact bytes are hashed
// (composite hash) and encrypted (ciphertext). Builder, strict parser, canonical serializer and the QR budget.

import { z } from 'zod'
import { QR_CIPHERTEXT_LIMIT } from './constants.ts'
import { InvalidPayloadError, PayloadTooLargeError } from './errors.ts'
import {
  emailAddress,
  hex64,
  latitude,
  longitude,
  newText,
  type SignerType,
  signerName,
  signerType,
  TRUST_ANCHORS,
  type TrustAnchor,
  text,
  unixSeconds,
  unlessMissing,
} from './field-rules.ts'
import { toHex } from './hex.ts'
import { encryptedPayloadLength } from './payload-cipher.ts'
import { fieldErrorMap, toFieldIssues } from './zod-issues.ts'

export interface AnchorSigner {
  t: SignerType
  n: string
  e: string
  c?: string
  p?: string
  tr?: TrustAnchor
  v?: boolean
}

export interface AnchorGeo {
  la: number
  ln: number
}

export interface AnchorPayload {
  d: string
  s: AnchorSigner
  ts: number
  g?: AnchorGeo
  salt: string
}

const SALT_BYTES = 32

// Empty `c`, `p` and `tr` are accepted on input because the canonical form simply omits them. A new payload (built or
// serialized for signing) refuses control and bidirectional formatting characters in its text; one read back does not.
const anchorPayloadSchema = (fresh: boolean) =>
  z.strictObject({
    d: hex64('the SHA-256 of the document'),
    s: z.strictObject({
      t: signerType(),
      n: signerName(fresh),
      e: emailAddress(),
      c: (fresh ? newText() : text()).optional(),
      p: (fresh ? newText() : text()).optional(),
      tr: z
        .enum(['', ...TRUST_ANCHORS], { error: unlessMissing(`must be one of ${TRUST_ANCHORS.join(', ')}`) })
        .optional(),
      v: z.boolean().optional(),
    }),
    ts: unixSeconds(),
    g: z.strictObject({ la: latitude(), ln: longitude() }).optional(),
    salt: hex64('32 random bytes'),
  })
const AnchorPayloadSchema = anchorPayloadSchema(false)
const NewAnchorPayloadSchema = anchorPayloadSchema(true)

export interface ValidateAnchorPayloadOptions {
  /**
   * A payload about to be signed: its name, company and position may hold no C0/C1 control and no bidirectional
   * embedding, override or isolate (U+202A–U+202E, U+2066–U+2069). Off for payloads read back from files or
   * ciphertexts, which are shown neutralised instead. @default false
   */
  fresh?: boolean
}

/**
 * Validates a payload object and returns it in canonical shape: keys in the order d, s{t,n,e,c,p,tr,v}, ts,
 * g{la,ln}, salt (object key order is insertion order, which `JSON.stringify` follows), empty `c`/`p`/`tr` and
 * absent `v`/`g` left out, negative zero made zero (JSON cannot tell them apart).
 */
export function validateAnchorPayload(value: unknown, options: ValidateAnchorPayloadOptions = {}): AnchorPayload {
  const schema = options.fresh ? NewAnchorPayloadSchema : AnchorPayloadSchema
  const result = schema.safeParse(value, { error: fieldErrorMap })
  if (!result.success) throw new InvalidPayloadError(toFieldIssues(result.error, 'payload'))
  const { d, s, ts, g, salt } = result.data
  const signer: AnchorSigner = { t: s.t, n: s.n, e: s.e }
  if (s.c) signer.c = s.c
  if (s.p) signer.p = s.p
  if (s.tr) signer.tr = s.tr
  if (s.v !== undefined) signer.v = s.v
  return g ? { d, s: signer, ts, g: { la: g.la + 0, ln: g.ln + 0 }, salt } : { d, s: signer, ts, salt }
}

/**
 * The canonical serialization: compact JSON, non-ASCII characters as themselves, numbers as ECMAScript prints
 * them. These are the bytes that are hashed and encrypted, for a new signature: the text rules of a fresh payload apply.
 */
export function serializeAnchorPayload(payload: AnchorPayload): string {
  return JSON.stringify(validateAnchorPayload(payload, { fresh: true }))
}

export interface ParseAnchorPayloadOptions {
  /**
   * Refuse text that is not exactly the canonical serialization of what it parses to (other key order, spacing,
   * empty optional fields, duplicate keys, other number spelling), so what is shown is what was hashed.
   * @default true
   */
  requireCanonical?: boolean
}

/** Parses and validates serialized payload JSON, e.g. a decrypted ciphertext. */
export function parseAnchorPayload(json: string, options: ParseAnchorPayloadOptions = {}): AnchorPayload {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    throw new InvalidPayloadError([{ field: 'payload', reason: 'not valid JSON' }])
  }
  const payload = validateAnchorPayload(value)
  if ((options.requireCanonical ?? true) && JSON.stringify(payload) !== json) {
    throw new InvalidPayloadError([
      { field: 'payload', reason: 'not in canonical form (key order, spacing, empty fields or number spelling)' },
    ])
  }
  return payload
}

/** Throws `PayloadTooLargeError` when the payload's base64url ciphertext would exceed the QR budget. */
export function assertFitsQrBudget(serialized: string): void {
  const length = encryptedPayloadLength(new TextEncoder().encode(serialized).length)
  if (length > QR_CIPHERTEXT_LIMIT) throw new PayloadTooLargeError(length, QR_CIPHERTEXT_LIMIT)
}

/** 32 bytes from the platform's secure random source, as 64 lowercase hex characters. */
export function generateSalt(): string {
  return toHex(crypto.getRandomValues(new Uint8Array(SALT_BYTES)))
}

export interface AnchorPayloadInput {
  /** SHA-256 hex of the PDF content before the QR code is embedded. */
  documentHash: string
  signer: {
    type: SignerType
    name: string
    email: string
    company?: string | null
    position?: string | null
    /** Usually from `trustFromJwtClaims`. */
    trust?: TrustAnchor | null
    verified?: boolean | null
  }
  /** Signing time: a Date, or Unix seconds. */
  timestamp: Date | number
  geo?: { latitude: number; longitude: number } | null
  /** Leave out to get a fresh random salt, as production must; given only to reproduce known payloads. */
  salt?: string
}

/**
 * Builds a validated payload in canonical shape and checks it against the QR budget before anything is
 * encrypted, so a too-long name or company is reported as such rather than as a failing QR code.
 */
export function buildAnchorPayload(input: AnchorPayloadInput): AnchorPayload {
  const { signer, geo } = input
  const payload = validateAnchorPayload(
    {
      d: input.documentHash,
      s: {
        t: signer.type,
        n: signer.name,
        e: signer.email,
        c: signer.company ?? undefined,
        p: signer.position ?? undefined,
        tr: signer.trust ?? undefined,
        v: signer.verified ?? undefined,
      },
      ts: input.timestamp instanceof Date ? Math.floor(input.timestamp.getTime() / 1000) : input.timestamp,
      g: geo ? { la: geo.latitude, ln: geo.longitude } : undefined,
      salt: input.salt ?? generateSalt(),
    },
    { fresh: true },
  )
  assertFitsQrBudget(JSON.stringify(payload))
  return payload
}

/** Claims of the service's JWT that say how the signer authenticated. */
export interface JwtTrustClaims {
  trust?: unknown
  verified?: unknown
}

/**
 * The `trust` and `verified` of a signer, read from the JWT claims of the same names, ready for
 * `buildAnchorPayload({ signer: { ...signer, ...trustFromJwtClaims(claims) } })`; absent claims stay absent.
 */
export function trustFromJwtClaims(claims: JwtTrustClaims): { trust?: TrustAnchor; verified?: boolean } {
  const out: { trust?: TrustAnchor; verified?: boolean } = {}
  if (claims.trust !== undefined) {
    if (!TRUST_ANCHORS.includes(claims.trust as TrustAnchor)) {
      throw new InvalidPayloadError([
        { field: 's.tr', reason: `JWT claim "trust" must be one of ${TRUST_ANCHORS.join(', ')}` },
      ])
    }
    out.trust = claims.trust as TrustAnchor
  }
  if (claims.verified !== undefined) {
    if (typeof claims.verified !== 'boolean') {
      throw new InvalidPayloadError([{ field: 's.v', reason: 'JWT claim "verified" must be a boolean' }])
    }
    out.verified = claims.verified
  }
  return out
}
