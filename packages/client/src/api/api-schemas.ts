// The answers of the service's routes this client calls, as Zod schemas: every 2xx body is parsed with them before
// a caller sees it, their inferred types are the client's response types, and a test compares each of them with
// the service's /openapi.json so that a route changing shape fails the suite instead of an application.

import { z } from 'zod'
import { TRUST_ANCHORS } from '../formats/field-rules.ts'

export const UserSchema = z.object({
  id: z.string(),
  email: z.string(),
  name: z.string().nullable(),
  authProvider: z.string(),
  plan: z.string(),
})

export const SignInSchema = z.object({ token: z.string(), expiresAt: z.string(), user: UserSchema })

export const CodeSentSchema = z.object({ sent: z.literal(true) })

export const MeSchema = z.object({
  user: UserSchema,
  usage: z.object({ used: z.number().int(), limit: z.number().int(), resetsAt: z.string() }),
})

const ADDRESS = /^0x[0-9a-fA-F]{40}$/
/** A chain id as EIP-155 uses it: a positive whole number a JSON number holds exactly. */
const CHAIN_ID = z.number().int().min(1).max(Number.MAX_SAFE_INTEGER)
const HTTP_URL = /^https?:\/\/[^\s\p{C}]+$/u

/** What a verifier pins or trusts: a service whose answer says anything else is refused, not believed in part. */
const PEM_CERTIFICATE = z
  .string()
  .max(20_000)
  .regex(/^-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\s*$/)

export const InfoSchema = z.object({
  chainId: CHAIN_ID,
  contractAddress: z.string().regex(ADDRESS, 'not a contract address'),
  relayers: z.array(z.string().regex(ADDRESS, 'not an address')).max(1_000),
  publicRpcUrl: z.string().regex(HTTP_URL, 'not an http(s) URL').nullable(),
  explorerTxUrl: z.string().max(2_000).nullable(),
  verifyBaseUrl: z.string().regex(HTTP_URL, 'not an http(s) URL'),
  /**
   * The CA that certifies the signers of PDF signatures (PEM, the issuing CA first): the roots to trust; and where its
   * certificates' revocation status is (OCSP, CRL).
   */
  pdfSigning: z.object({
    certificates: z.array(PEM_CERTIFICATE).min(1).max(10),
    ocspUrl: z.url({ protocol: /^https?$/ }).max(2048),
    crlUrl: z.url({ protocol: /^https?$/ }).max(2048),
    /** The roots the service's time-stamping authorities chain to (PEM): to trust for timestamps only. */
    timestampCertificates: z.array(PEM_CERTIFICATE).max(10),
  }),
  version: z.string().max(100),
})

/** The answer of `POST /api/signer-certificates`: a certificate of the service's CA for the signer's own key. */
export const SignerCertificateSchema = z.object({
  /** DER, base64. */
  certificate: z.string().max(10_000),
  /** The issuing CA up to the root, DER, base64. */
  chain: z.array(z.string().max(10_000)).max(10),
  serialNumber: z.string().max(100),
  email: z.string().max(320),
  notAfter: z.string(),
})

/** The answer of `POST /api/pdf-signatures`. */
/** The answer of `POST /api/document-timestamps`. */
export const DocumentTimestampSchema = z.object({
  /** The RFC 3161 TimeStampToken (DER), base64. */
  token: z.string().max(100_000),
})

export const PdfSignatureSchema = z.object({
  txHash: z.string(),
  digest: z.string(),
  /** The CMS (DER), base64. */
  cms: z.string().max(100_000),
  signer: z.string(),
  timestamp: z.object({ time: z.string(), authority: z.string() }),
  blockTime: z.string(),
})

export const RelaySchema = z.object({
  txHash: z.string(),
  blockNumber: z.number().int().nullable(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['confirmed', 'pending']),
})

export const AnchorStateSchema = z.object({
  txHash: z.string(),
  compositeHash: z.string(),
  previousTxHash: z.string(),
  status: z.enum(['pending', 'confirmed', 'failed']),
  blockNumber: z.number().int().nullable(),
  createdAt: z.string(),
})

/** A page of GET /api/anchors: the user's anchors, newest first. */
export const AnchorPageSchema = z.object({
  anchors: z.array(AnchorStateSchema),
  /** Where the next page starts (give it as `cursor`); null on the last page. */
  nextCursor: z.string().nullable(),
})

/** An event of the account (GET /api/events, and the body of a webhook delivery with its id beside it). */
export const AccountEventSchema = z.object({
  id: z.string(),
  type: z.string(),
  timestamp: z.string(),
  data: z.record(z.string(), z.unknown()),
})

export const EventPageSchema = z.object({
  events: z.array(AccountEventSchema),
  /** Ask again with it as `after`, now or later, for what came since. */
  nextCursor: z.string(),
})

export const WebhookSchema = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()).nullable(),
  description: z.string().nullable(),
  status: z.enum(['enabled', 'disabled']),
  disabledReason: z.enum(['owner', 'gone', 'failing']).nullable(),
  createdAt: z.string(),
})

export const WebhookAttemptPageSchema = z.object({
  attempts: z.array(
    z.object({
      eventId: z.string(),
      type: z.string(),
      attempt: z.number().int(),
      at: z.string(),
      /** The HTTP status, or `timeout`, `refused` (an address the service may not call) or `error`. */
      status: z.string(),
      durationMs: z.number().int(),
      /** The first KiB of the answer. */
      response: z.string(),
    }),
  ),
  nextCursor: z.string().nullable(),
})

/** A webhook as registered: its secret (`whsec_…`) is in this answer only. */
export const CreatedWebhookSchema = WebhookSchema.extend({ secret: z.string() })

export const NotificationsSchema = z.object({ countersigned: z.boolean() })

/** What the service attests about the account that relayed an anchor (see decideIdentity); null for none. */
export const AttestationSchema = z
  .object({
    trust: z.enum(TRUST_ANCHORS),
    verified: z.boolean(),
    identityCommitment: z.string().regex(/^0x[0-9a-fA-F]{64}$/),
  })
  .nullable()

export const ChainEntrySchema = z.object({
  txHash: z.string(),
  compositeHash: z.string(),
  signer: z.string(),
  timestamp: z.number().int(),
  previousTxHash: z.string(),
  attestation: AttestationSchema,
})

export const VerifySchema = z.object({
  ...ChainEntrySchema.shape,
  chain: z.array(ChainEntrySchema),
  encryptedPayload: z.string().nullable(),
  /** The ciphertext was erased at the signer's request (their account was deleted). */
  payloadErased: z.boolean(),
  successors: z.array(ChainEntrySchema),
  /** Further anchors naming this one, not listed (`GET /api/verify/:txHash/successors?offset=`). */
  moreSuccessors: z.number().int().min(0),
})

export const LibrarySignatureSchema = z.object({
  id: z.string(),
  label: z.string(),
  base64Png: z.string(),
  updatedAt: z.string(),
  createdAt: z.string(),
})

export const LibrarySnippetSchema = z.object({
  id: z.string(),
  label: z.string(),
  text: z.string(),
  fontSize: z.number(),
  updatedAt: z.string(),
  createdAt: z.string(),
})

export const LibrarySchema = z.object({
  signatures: z.array(LibrarySignatureSchema),
  snippets: z.array(LibrarySnippetSchema),
})

/** A deleted library item in an export: its id and when it was deleted. */
const DeletionMarkerSchema = z.object({ id: z.string(), deletedAt: z.string() })
const exported = <T extends z.ZodRawShape>(item: z.ZodObject<T>) =>
  z.array(z.union([item.extend({ deletedAt: z.null() }), DeletionMarkerSchema]))

/** GET /api/account/export: everything the service holds about the user. */
export const AccountExportSchema = z.object({
  exportedAt: z.string(),
  account: z.object({
    id: z.string(),
    email: z.string(),
    name: z.string().nullable(),
    authProvider: z.string(),
    providerId: z.string().nullable(),
    plan: z.string(),
    monthlyLimit: z.number().int().nullable(),
    blockedAt: z.string().nullable(),
    notifications: z.object({ countersigned: z.boolean() }),
    createdAt: z.string(),
    usage: z.object({ period: z.string(), used: z.number().int(), limit: z.number().int() }),
    usageHistory: z.array(z.object({ period: z.string(), used: z.number().int() })),
  }),
  operatorActions: z.array(z.object({ at: z.string(), action: z.string(), before: z.unknown(), after: z.unknown() })),
  sessions: z.array(
    z.object({
      id: z.string(),
      provider: z.string(),
      createdAt: z.string(),
      expiresAt: z.string(),
      revokedAt: z.string().nullable(),
    }),
  ),
  signerCertificates: z.array(
    z.object({
      serialNumber: z.string(),
      certificate: z.string(),
      createdAt: z.string(),
      notAfter: z.string(),
      revokedAt: z.string().nullable(),
    }),
  ),
  anchors: z.array(
    z.object({
      ...AnchorStateSchema.omit({ status: true }).shape,
      status: z.string(),
      chainId: z.number().int(),
      encryptedPayload: z.string().nullable(),
      attestation: z.object({ trust: z.string(), verified: z.boolean(), identityCommitment: z.string() }).nullable(),
      pdfSignature: z
        .object({ digest: z.string(), timestampTime: z.string(), timestampAuthority: z.string() })
        .nullable(),
      confirmedAt: z.string().nullable(),
    }),
  ),
  events: z.array(z.object({ id: z.string(), type: z.string(), timestamp: z.string(), data: z.unknown() })),
  library: z.object({ signatures: exported(LibrarySignatureSchema), snippets: exported(LibrarySnippetSchema) }),
})

export const LibrarySyncResultSchema = z.object({
  ...LibrarySchema.shape,
  skipped: z.array(
    z.object({
      kind: z.enum(['signature', 'snippet']),
      id: z.string(),
      op: z.enum(['upsert', 'delete']),
      reason: z.enum(['stale']),
    }),
  ),
})

export const LibraryStatusSchema = z.object({
  exists: z.boolean(),
  signatures: z.number().int(),
  snippets: z.number().int(),
  updatedAt: z.string().nullable(),
})

const DeletionSchema = z.object({ id: z.string(), deletedAt: z.string() })

/** The body of `PUT /api/library/sync` (checked against the service's request schema, never sent through Zod). */
export const LibrarySyncBodySchema = z.object({
  signatures: z
    .object({ upsert: z.array(LibrarySignatureSchema).optional(), delete: z.array(DeletionSchema).optional() })
    .optional(),
  snippets: z
    .object({ upsert: z.array(LibrarySnippetSchema).optional(), delete: z.array(DeletionSchema).optional() })
    .optional(),
})

/** The body of `POST /api/relay`. */
export const RelayBodySchema = z.object({
  compositeHash: z.string(),
  previousTxHash: z.string(),
  encryptedPayload: z.string(),
  /** The payload's salt: the service then attests the relaying account (and forgets the salt). */
  salt: z.string().optional(),
})

export const ExchangeBodySchema = z.object({ code: z.string(), code_verifier: z.string() })

export const RequestCodeBodySchema = z.object({ email: z.string() })

export const VerifyCodeBodySchema = z.object({ email: z.string(), code: z.string() })

export type User = z.infer<typeof UserSchema>
export type SignInResult = z.infer<typeof SignInSchema>
export type Me = z.infer<typeof MeSchema>
export type ServiceInfo = z.infer<typeof InfoSchema>
export type RelayResult = z.infer<typeof RelaySchema>
export type PdfSignatureResult = z.infer<typeof PdfSignatureSchema>
export type SignerCertificateResult = z.infer<typeof SignerCertificateSchema>
export type AnchorState = z.infer<typeof AnchorStateSchema>
export type AnchorPage = z.infer<typeof AnchorPageSchema>
export type AccountEvent = z.infer<typeof AccountEventSchema>
export type EventPage = z.infer<typeof EventPageSchema>
export type WebhookEndpoint = z.infer<typeof WebhookSchema>
export type CreatedWebhook = z.infer<typeof CreatedWebhookSchema>
export type WebhookAttemptPage = z.infer<typeof WebhookAttemptPageSchema>
export type Notifications = z.infer<typeof NotificationsSchema>
export type AccountExport = z.infer<typeof AccountExportSchema>
export type ChainEntry = z.infer<typeof ChainEntrySchema>
export type VerifyResult = z.infer<typeof VerifySchema>

/** `GET /api/verify/:txHash/successors?offset=`: the anchors naming one as previous, past those its verify lists. */
export const SuccessorPageSchema = z.object({
  successors: z.array(ChainEntrySchema),
  nextOffset: z.number().int().min(0).nullable(),
})
export type SuccessorPage = z.infer<typeof SuccessorPageSchema>
export type LibrarySignature = z.infer<typeof LibrarySignatureSchema>
export type LibrarySnippet = z.infer<typeof LibrarySnippetSchema>
export type Library = z.infer<typeof LibrarySchema>
export type LibrarySyncBody = z.infer<typeof LibrarySyncBodySchema>
export type LibrarySyncResult = z.infer<typeof LibrarySyncResultSchema>
export type LibraryStatus = z.infer<typeof LibraryStatusSchema>
export type RelayBody = z.infer<typeof RelayBodySchema>
export type ExchangeBody = z.infer<typeof ExchangeBodySchema>
export type RequestCodeBody = z.infer<typeof RequestCodeBodySchema>
export type VerifyCodeBody = z.infer<typeof VerifyCodeBodySchema>
