// The signature metadata embedded in each PDF revision: the version 2 schema, a reader that also accepts version 1,
// a writer that always writes version 2, and the rebuild of the anchor payload from a signature's metadata.

import { z } from 'zod'
import { type AnchorPayload, validateAnchorPayload } from './anchor-payload.ts'
import { compositeHash, compositeHashesEqual } from './composite-hash.ts'
import { InvalidMetadataError } from './errors.ts'
import {
  emailAddress,
  hex64,
  latitude,
  longitude,
  MAX_UNIX_SECONDS,
  prefixedHex64,
  type SignerType,
  signerName,
  signerType,
  type TrustAnchor,
  text,
  trustAnchor,
  unlessMissing,
} from './field-rules.ts'
import { parseQrUrl } from './qr-url.ts'
import { fieldErrorMap, toFieldIssues } from './zod-issues.ts'

export const PDF_METADATA_VERSION = 2

export interface PdfSignature {
  signer_name: string
  signer_email: string
  /** Added in version 2; version 1 reads as `individual`. */
  signer_type: SignerType
  /** Added in version 2; version 1 reads as null. */
  company: string | null
  /** Added in version 2; version 1 reads as null. */
  position: string | null
  /** ISO 8601 UTC, `Z` suffix, e.g. `2025-11-21T04:40:00Z`. */
  timestamp: string
  doc_hash: string
  composite_hash: string
  tx_hash: string
  /** Added in version 2; version 1 reads as null. */
  qr_url: string | null
  /** Added in version 2; version 1 reads as null. */
  salt: string | null
  /** [latitude, longitude]. Added in version 2; version 1 reads as null. */
  geo: [number, number] | null
  /** Extension: the payload's `s.tr`. */
  trust?: TrustAnchor
  /** Extension: the payload's `s.v`. */
  verified?: boolean
  /** Extension: EIP-155 chain id of the network holding the anchor. */
  chain_id?: number
  /** Extension: address of the DocumentAnchors contract. */
  contract_address?: string
}

export interface PdfMetadata {
  version: 2
  signatures: PdfSignature[]
}

const ISO_UTC = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/

/** Unix seconds of an ISO 8601 UTC timestamp, with its fractional part; undefined if it is not one. */
function parseIsoUtc(value: string): { seconds: number; fraction: string } | undefined {
  const m = ISO_UTC.exec(value)
  if (!m) return undefined
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ]
  const date = new Date(Date.UTC(year, month - 1, day, hour, minute, second))
  date.setUTCFullYear(year) // Date.UTC maps years 0-99 to 1900-1999
  // Round-tripping through Date refuses impossible dates such as 2025-02-30 or 24:00:00.
  const same =
    date.getUTCFullYear() === year &&
    date.getUTCMonth() === month - 1 &&
    date.getUTCDate() === day &&
    date.getUTCHours() === hour &&
    date.getUTCMinutes() === minute &&
    date.getUTCSeconds() === second
  return same ? { seconds: date.getTime() / 1000, fraction: m[7] ?? '' } : undefined
}

/** The metadata `timestamp` for Unix seconds: ISO 8601 UTC to the second, e.g. `2025-11-21T04:40:00Z`. */
export function isoTimestampFromUnix(seconds: number): string {
  if (!Number.isSafeInteger(seconds) || seconds < 0 || seconds > MAX_UNIX_SECONDS) {
    throw new InvalidMetadataError([{ field: 'timestamp', reason: 'must be whole seconds from 1970 to 9999' }])
  }
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z')
}

const isoTimestamp = () =>
  z.string().refine((value) => parseIsoUtc(value) !== undefined, {
    error: 'must be an ISO 8601 UTC timestamp such as 2025-11-21T04:40:00Z',
  })

const qrUrl = () =>
  z.string().refine(
    (value) => {
      try {
        parseQrUrl(value)
        return true
      } catch {
        return false
      }
    },
    { error: 'not a valid QR URL ({verifyBaseUrl}/v/<43 base64url>#<22 base64url>)' },
  )

// Fields of version 1. Unknown fields are dropped rather than refused, so that fields of later writers (such as
// our extension fields, in readers that predate them) never make a document unreadable.
const V1_FIELDS = {
  signer_name: signerName(),
  signer_email: emailAddress(),
  timestamp: isoTimestamp(),
  doc_hash: hex64('the SHA-256 of the document'),
  composite_hash: prefixedHex64('a composite hash'),
  tx_hash: prefixedHex64('a transaction hash'),
}

const SignatureV1Schema = z.object(V1_FIELDS)

const SignatureSchema = z
  .object({
    ...V1_FIELDS,
    signer_type: signerType(),
    company: text().nullable(),
    position: text().nullable(),
    qr_url: qrUrl().nullable(),
    salt: hex64('32 random bytes').nullable(),
    geo: z.tuple([latitude(), longitude()], { error: unlessMissing('must be [latitude, longitude]') }).nullable(),
    trust: trustAnchor().optional(),
    verified: z.boolean().optional(),
    chain_id: z
      .number()
      .int({ error: 'must be a positive integer' })
      .positive({ error: 'must be a positive integer' })
      .optional(),
    contract_address: z
      .string()
      .regex(/^0x[0-9a-fA-F]{40}$/, { error: 'must be 0x followed by 40 hex characters' })
      .optional(),
  })
  .superRefine((signature, ctx) => {
    // A QR URL pointing at another transaction would send verifiers to the wrong anchor.
    if (typeof signature.qr_url !== 'string' || typeof signature.tx_hash !== 'string') return
    try {
      if (!compositeHashesEqual(parseQrUrl(signature.qr_url).txHash, signature.tx_hash)) {
        ctx.addIssue({ code: 'custom', path: ['qr_url'], message: 'its transaction hash differs from tx_hash' })
      }
    } catch {
      // Already reported by the qr_url field itself.
    }
  })

const MetadataV1Schema = z.object({ version: z.literal(1), signatures: z.array(SignatureV1Schema) })
const MetadataV2Schema = z.object({ version: z.literal(2), signatures: z.array(SignatureSchema) })

function fail(error: z.ZodError, root: string): never {
  throw new InvalidMetadataError(toFieldIssues(error, root))
}

/** Canonical key order, extension fields last and only when present. */
function orderSignature(signature: PdfSignature): PdfSignature {
  const out: PdfSignature = {
    signer_name: signature.signer_name,
    signer_email: signature.signer_email,
    signer_type: signature.signer_type,
    company: signature.company,
    position: signature.position,
    timestamp: signature.timestamp,
    doc_hash: signature.doc_hash,
    composite_hash: signature.composite_hash,
    tx_hash: signature.tx_hash,
    qr_url: signature.qr_url,
    salt: signature.salt,
    geo: signature.geo,
  }
  if (signature.trust !== undefined) out.trust = signature.trust
  if (signature.verified !== undefined) out.verified = signature.verified
  if (signature.chain_id !== undefined) out.chain_id = signature.chain_id
  if (signature.contract_address !== undefined) out.contract_address = signature.contract_address
  return out
}

/**
 * Reads parsed metadata of version 1 or 2 as version 2. Version 1 signatures get the version 2 defaults:
 * `signer_type` "individual", and null `company`, `position`, `qr_url`, `salt` and `geo`.
 */
export function parsePdfMetadata(value: unknown): PdfMetadata {
  const version = typeof value === 'object' && value !== null ? (value as { version?: unknown }).version : undefined
  if (version === 1) {
    const result = MetadataV1Schema.safeParse(value, { error: fieldErrorMap })
    if (!result.success) fail(result.error, 'metadata')
    return {
      version: 2,
      signatures: result.data.signatures.map((signature) =>
        orderSignature({
          ...signature,
          signer_type: 'individual',
          company: null,
          position: null,
          qr_url: null,
          salt: null,
          geo: null,
        }),
      ),
    }
  }
  if (version === 2) {
    const result = MetadataV2Schema.safeParse(value, { error: fieldErrorMap })
    if (!result.success) fail(result.error, 'metadata')
    return { version: 2, signatures: result.data.signatures.map(orderSignature) }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new InvalidMetadataError([{ field: 'metadata', reason: 'expected an object' }])
  }
  if (version === undefined) throw new InvalidMetadataError([{ field: 'version', reason: 'is required' }])
  throw new InvalidMetadataError([{ field: 'version', reason: 'unsupported version; this reader knows 1 and 2' }])
}

/** Reads metadata JSON text of version 1 or 2 as version 2. */
export function readPdfMetadata(json: string): PdfMetadata {
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    throw new InvalidMetadataError([{ field: 'metadata', reason: 'not valid JSON' }])
  }
  return parsePdfMetadata(value)
}

/** Validates and writes metadata as version 2 JSON, whatever version it was read from. */
export function writePdfMetadata(metadata: { signatures: readonly PdfSignature[] }): string {
  const result = MetadataV2Schema.safeParse(
    { version: PDF_METADATA_VERSION, signatures: metadata.signatures },
    { error: fieldErrorMap },
  )
  if (!result.success) fail(result.error, 'metadata')
  return JSON.stringify({ version: PDF_METADATA_VERSION, signatures: result.data.signatures.map(orderSignature) })
}

export interface AnchoringDetails {
  compositeHash: string
  txHash: string
  qrUrl: string | null
  chainId?: number
  contractAddress?: string
}

/** The metadata entry for a signature whose payload has been anchored; it carries all the payload's fields. */
export function signatureFromPayload(payload: AnchorPayload, anchoring: AnchoringDetails): PdfSignature {
  const { d, s, ts, g, salt } = validateAnchorPayload(payload)
  const signature: PdfSignature = {
    signer_name: s.n,
    signer_email: s.e,
    signer_type: s.t,
    company: s.c ?? null,
    position: s.p ?? null,
    timestamp: isoTimestampFromUnix(ts),
    doc_hash: d,
    composite_hash: anchoring.compositeHash,
    tx_hash: anchoring.txHash,
    qr_url: anchoring.qrUrl,
    salt,
    geo: g ? [g.la, g.ln] : null,
  }
  if (s.tr !== undefined) signature.trust = s.tr
  if (s.v !== undefined) signature.verified = s.v
  if (anchoring.chainId !== undefined) signature.chain_id = anchoring.chainId
  if (anchoring.contractAddress !== undefined) signature.contract_address = anchoring.contractAddress
  const result = SignatureSchema.safeParse(signature, { error: fieldErrorMap })
  if (!result.success) fail(result.error, 'signature')
  return orderSignature(result.data)
}

export interface RebuiltPayload {
  payload: AnchorPayload
  /** Canonical serialization of `payload`: the bytes that were hashed when signing. */
  serialized: string
  /** Composite hash of `serialized`, to compare with the one recorded on chain. */
  compositeHash: string
  /** Whether `compositeHash` equals the metadata's own `composite_hash` (case-insensitive). */
  matchesMetadata: boolean
}

/**
 * Rebuilds the anchor payload from a signature's metadata and hashes it, so the PDF plus any public RPC proves a
 * signature without this service: `doc_hash` → d, `signer_*`/`company`/`position`/`trust`/`verified` → s,
 * `timestamp` → ts, `geo` → g, `salt` → salt. Needs the salt (absent in version 1) and whole-second timestamps.
 */
export async function rebuildPayloadFromMetadata(signature: PdfSignature): Promise<RebuiltPayload> {
  const result = SignatureSchema.safeParse(signature, { error: fieldErrorMap })
  if (!result.success) fail(result.error, 'signature')
  const sig = result.data
  if (sig.salt === null) {
    throw new InvalidMetadataError([
      { field: 'salt', reason: 'is null, so the payload cannot be rebuilt (version 1 metadata has no salt)' },
    ])
  }
  const time = parseIsoUtc(sig.timestamp)!
  if (/[1-9]/.test(time.fraction)) {
    throw new InvalidMetadataError([
      { field: 'timestamp', reason: 'has a fraction of a second, but the payload timestamp is whole seconds' },
    ])
  }
  if (time.seconds < 0) {
    throw new InvalidMetadataError([{ field: 'timestamp', reason: 'is before 1970, which the payload cannot hold' }])
  }
  const payload = validateAnchorPayload({
    d: sig.doc_hash,
    s: {
      t: sig.signer_type,
      n: sig.signer_name,
      e: sig.signer_email,
      c: sig.company ?? undefined,
      p: sig.position ?? undefined,
      tr: sig.trust,
      v: sig.verified,
    },
    ts: time.seconds,
    g: sig.geo ? { la: sig.geo[0], ln: sig.geo[1] } : undefined,
    salt: sig.salt,
  })
  const serialized = JSON.stringify(payload)
  const hash = await compositeHash(serialized)
  return { payload, serialized, compositeHash: hash, matchesMetadata: compositeHashesEqual(hash, sig.composite_hash) }
}
