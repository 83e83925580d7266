// Every stored record of the specification, plus what sign-in, the relayer, quotas and the library need.
import { sql } from 'drizzle-orm'
import {
  bigint,
  boolean,
  check,
  customType,
  doublePrecision,
  index,
  integer,
  jsonb,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
  uuid,
} from 'drizzle-orm/pg-core'

/** A transaction id (`pg_current_xact_id()`), which orders commits where a sequence cannot. */
const xid8 = customType<{ data: string; driverData: string }>({ dataType: () => 'xid8' })

const createdAt = () => timestamp('created_at', { withTimezone: true, precision: 3 }).notNull().defaultNow()
const updatedAt = () =>
  timestamp('updated_at', { withTimezone: true, precision: 3 })
    .notNull()
    .defaultNow()
    .$onUpdate(() => new Date())

export const users = pgTable('users', {
  id: uuid('id').primaryKey().defaultRandom(),
  /** Stored lower-cased so that one address is one account. */
  email: text('email').notNull().unique(),
  name: text('name'),
  authProvider: text('auth_provider').notNull().default('email'),
  providerId: text('provider_id'),
  walletAddress: text('wallet_address').unique(),
  anchorCount: integer('anchor_count').notNull().default(0),
  plan: text('plan').notNull().default('free'),
  /** Anchors per month for this user alone, set by an operator; null: the plan's. */
  monthlyLimit: integer('monthly_limit'),
  /** Set by an operator: the account cannot sign in, and its sessions answer 403 ACCOUNT_BLOCKED. */
  blockedAt: timestamp('blocked_at', { withTimezone: true, precision: 3 }),
  /** Opted in: an e-mail when someone countersigns a document this account anchored (an `anchor.countersigned`). */
  notifyCountersigned: boolean('notify_countersigned').notNull().default(false),
  createdAt: createdAt(),
  updatedAt: updatedAt(),
})

/**
 * Every operator action on an account (`npm run admin`): what, on whom, the state before and after, when, by whom.
 * No foreign key: the record outlives a deleted account.
 */
export const operatorAudit = pgTable(
  'operator_audit',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    operator: text('operator').notNull(),
    action: text('action').notNull(),
    userId: uuid('user_id').notNull(),
    userEmail: text('user_email').notNull(),
    before: jsonb('before'),
    after: jsonb('after'),
  },
  (table) => [index('operator_audit_user_idx').on(table.userId, table.at)],
)

export const sessions = pgTable(
  'sessions',
  {
    /** Carried in the JWT's `sid` claim. */
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** SHA-256 of the issued JWT: the token itself is never stored. */
    token: text('token').notNull().unique(),
    trust: text('trust').notNull(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (table) => [index('sessions_user_id_idx').on(table.userId)],
)

export const magicLinks = pgTable(
  'magic_links',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** Lower-cased. */
    email: text('email').notNull(),
    /** Keyed hash of the 6-digit code: a database leak does not reveal live codes. */
    code: text('code').notNull().unique(),
    expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
    /** Set once the code signed someone in, died of too many attempts or was superseded by a newer code. */
    used: boolean('used').notNull().default(false),
    failedAttempts: integer('failed_attempts').notNull().default(0),
    createdAt: createdAt(),
  },
  (table) => [index('magic_links_email_idx').on(table.email, table.createdAt)],
)

/** Short-lived, single-use OAuth flow state: `state`, `nonce` and the PKCE verifier, shared by all instances. */
export const oauthFlows = pgTable('oauth_flows', {
  /** SHA-256 of the `state` value sent to the provider. */
  stateHash: text('state_hash').primaryKey(),
  provider: text('provider').notNull(),
  nonce: text('nonce').notNull(),
  codeVerifier: text('code_verifier').notNull(),
  /** The desktop app's S256 challenge when it opted into the one-time-code hand-off. */
  appCodeChallenge: text('app_code_challenge'),
  expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: createdAt(),
})

/** One-time codes the desktop app exchanges for a JWT (the opt-in hand-off that keeps tokens out of deep links). */
export const authExchangeCodes = pgTable('auth_exchange_codes', {
  /** SHA-256 of the code. */
  codeHash: text('code_hash').primaryKey(),
  /** The session and its JWT are created only at exchange time, so no token is stored here. */
  userId: uuid('user_id')
    .notNull()
    .references(() => users.id, { onDelete: 'cascade' }),
  trust: text('trust').notNull(),
  /** The app's S256 challenge: only the holder of the matching verifier can exchange the code. */
  codeChallenge: text('code_challenge').notNull(),
  expiresAt: timestamp('expires_at', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: createdAt(),
})

/** The tx_hash an anchor holds between its reservation and its signed transaction: never a real hash. */
export const UNSIGNED_PREFIX = 'unsigned:'

/** What an anchor and a relay transaction can be; how each may change is src/relayer/outbox/transitions.ts. */
export const ANCHOR_STATUSES = ['pending', 'confirmed', 'failed'] as const
export const RELAY_TRANSACTION_STATUSES = ['signed', 'broadcast', 'mined', 'replaced', 'failed'] as const

export const anchors = pgTable(
  'anchors',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    /** The current transaction hash: provisional while pending (a fee bump replaces it), final once confirmed. */
    txHash: text('tx_hash').notNull().unique(),
    /** Lower-case; one anchor per composite hash makes relays idempotent. */
    compositeHash: text('composite_hash').notNull().unique(),
    previousTxHash: text('previous_tx_hash').notNull(),
    /** Stored and returned byte for byte; null once erased at the signer's request (their account was deleted). */
    encryptedPayload: text('encrypted_payload'),
    /** When the ciphertext and the attestation were erased with the account; the on-chain event stays. */
    payloadErasedAt: timestamp('payload_erased_at', { withTimezone: true, precision: 3 }),
    /**
     * When the relayer found this anchor on chain after the database had forgotten it (a failover, a restore): its
     * ciphertext and its owner were never recovered (src/relayer/actions/reconcile.ts).
     */
    reconciledAt: timestamp('reconciled_at', { withTimezone: true, precision: 3 }),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    /**
     * The service's attestation of the relaying account, set only when the relay sent the payload's salt (never
     * stored): SHA-256 of its lower-cased e-mail and the salt, and the session's trust and verified. All three or none.
     */
    identityCommitment: text('identity_commitment'),
    attestedTrust: text('attested_trust'),
    attestedVerified: boolean('attested_verified'),
    status: text('status', { enum: ANCHOR_STATUSES }).notNull().default('pending'),
    blockNumber: bigint('block_number', { mode: 'number' }),
    /** The block and the position of its DocumentAnchored event there, as its receipt says; null while pending. */
    blockHash: text('block_hash'),
    logIndex: integer('log_index'),
    /** When `anchor.finalized` was recorded for its block (FINALITY_CONFIRMATIONS deep); null again if mined anew. */
    finalizedAt: timestamp('finalized_at', { withTimezone: true, precision: 3 }),
    chainId: integer('chain_id').notNull(),
    relayerAddress: text('relayer_address').notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    confirmedAt: timestamp('confirmed_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [
    index('anchors_previous_tx_hash_idx').on(table.previousTxHash),
    index('anchors_user_id_idx').on(table.userId, table.createdAt),
    index('anchors_pending_idx').on(table.status).where(sql`${table.status} = 'pending'`),
    uniqueIndex('anchors_relayer_nonce_idx').on(table.chainId, table.relayerAddress, table.nonce),
    // The reorg watch re-reads recently confirmed anchors.
    index('anchors_confirmed_block_idx').on(table.blockNumber).where(sql`${table.status} = 'confirmed'`),
    // The finality pass reads the confirmed anchors not yet finalized.
    index('anchors_unfinalized_idx')
      .on(table.blockNumber)
      .where(sql`${table.status} = 'confirmed' AND ${table.finalizedAt} IS NULL`),
    check(
      'anchors_attestation_whole',
      sql`(${table.identityCommitment} IS NULL) = (${table.attestedTrust} IS NULL)
          AND (${table.identityCommitment} IS NULL) = (${table.attestedVerified} IS NULL)`,
    ),
    // A ciphertext is missing only because it was erased or never recovered, and an erased one is gone for good.
    check(
      'anchors_payload_or_erased',
      sql`(${table.encryptedPayload} IS NULL) = (${table.payloadErasedAt} IS NOT NULL OR ${table.reconciledAt} IS NOT NULL)`,
    ),
  ],
)

/**
 * The PDF signatures the service timestamped: one per anchor, for the digest its owner's signature first named, so
 * that a repeat of the same request is answered with the same CMS and another digest is refused. A row without its CMS
 * is a reservation: a request is asking the time-stamping authority for it, and a concurrent one for another digest
 * loses before any authority is asked. The digest is all the service ever sees of the document.
 */
export const pdfSignatures = pgTable('pdf_signatures', {
  anchorId: uuid('anchor_id')
    .primaryKey()
    .references(() => anchors.id, { onDelete: 'cascade' }),
  /** SHA-256 of the PDF's byte range, lower-case hex. */
  digest: text('digest').notNull(),
  /** The CMS answered (DER, base64); null while it is being timestamped. */
  cms: text('cms'),
  /** What the timestamp token says, beside the anchor's block time. */
  timestampTime: timestamp('timestamp_time', { withTimezone: true, precision: 3 }),
  timestampAuthority: text('timestamp_authority'),
  blockTime: timestamp('block_time', { withTimezone: true, precision: 3 }).notNull(),
  createdAt: createdAt(),
})

/**
 * Every certificate the service's CA issued a signer, kept for its revocation status (what OCSP and the CRL answer).
 * An account's deletion or blocking revokes its certificates; a deleted account's leave the serial, the validity and
 * the revocation, and lose the certificate itself (which names the e-mail).
 */
export const signerCertificates = pgTable(
  'signer_certificates',
  {
    /** The serial number, lower-case hex. */
    serial: text('serial').primaryKey(),
    userId: uuid('user_id').references(() => users.id, { onDelete: 'set null' }),
    /** The certificate's DER, base64; null once its account is deleted. */
    certificate: text('certificate'),
    notAfter: timestamp('not_after', { withTimezone: true, precision: 3 }).notNull(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 3 }),
    /** Why: `deleted` (the account), `blocked` (by an operator). */
    revocationReason: text('revocation_reason'),
    createdAt: createdAt(),
  },
  (table) => [index('signer_certificates_user_idx').on(table.userId)],
)

/**
 * The relayer's outbox: every signed transaction (the first and each fee-bumped replacement) is stored here before
 * it is broadcast, so a crash never leaves a transaction on chain that the service does not know about.
 */
export const relayTransactions = pgTable(
  'relay_transactions',
  {
    txHash: text('tx_hash').primaryKey(),
    /**
     * Null for a filler: a self-transfer holding a nonce whose anchor was withdrawn after a failed broadcast, so later
     * nonces are never stuck behind a gap. An unsent filler is handed out again to the next relay.
     */
    anchorId: uuid('anchor_id').references(() => anchors.id, { onDelete: 'cascade' }),
    chainId: integer('chain_id').notNull(),
    relayerAddress: text('relayer_address').notNull(),
    nonce: bigint('nonce', { mode: 'number' }).notNull(),
    rawTransaction: text('raw_transaction').notNull(),
    /** Wei, as decimal strings: fees outgrow JavaScript numbers. */
    maxFeePerGas: text('max_fee_per_gas').notNull(),
    maxPriorityFeePerGas: text('max_priority_fee_per_gas').notNull(),
    status: text('status', { enum: RELAY_TRANSACTION_STATUSES }).notNull().default('signed'),
    broadcastAt: timestamp('broadcast_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (table) => [
    index('relay_transactions_anchor_idx').on(table.anchorId),
    index('relay_transactions_nonce_idx').on(table.chainId, table.relayerAddress, table.nonce),
    // The monitor's work list: transactions not yet known to be mined or replaced.
    index('relay_transactions_open_idx')
      .on(table.chainId, table.relayerAddress, table.nonce)
      .where(sql`${table.status} in ('signed', 'broadcast')`),
  ],
)

/** The single nonce authority: a row per relayer key, locked (`FOR UPDATE`) while a nonce is handed out. */
export const relayerNonces = pgTable(
  'relayer_nonces',
  {
    chainId: integer('chain_id').notNull(),
    relayerAddress: text('relayer_address').notNull(),
    nextNonce: bigint('next_nonce', { mode: 'number' }).notNull(),
    updatedAt: updatedAt(),
  },
  (table) => [primaryKey({ columns: [table.chainId, table.relayerAddress] })],
)

/**
 * Relayer keys being drained for rotation: shared by every instance, whose pools give such a key no new anchors
 * while its pending transactions finish. Set and cleared by the owner's `deploy drain` / `deploy undrain`.
 */
export const relayerDrains = pgTable(
  'relayer_drains',
  {
    chainId: integer('chain_id').notNull(),
    /** Lower-case, as in `anchors`. */
    relayerAddress: text('relayer_address').notNull(),
    since: timestamp('since', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  },
  (table) => [primaryKey({ columns: [table.chainId, table.relayerAddress] })],
)

/** Anchors created per user and calendar month (UTC); incremented in the anchor's own transaction. */
/**
 * This month's usage of deleted accounts, by the SHA-256 of their e-mail address: an account deleted and made again
 * with the same address starts from what it had used (src/accounts/delete-account.ts). Rows of past months are
 * removed with the next deletion.
 */
export const deletedAccountUsage = pgTable(
  'deleted_account_usage',
  {
    emailHash: text('email_hash').notNull(),
    /** First day of the month, `YYYY-MM-01`. */
    period: text('period').notNull(),
    used: integer('used').notNull(),
  },
  (table) => [primaryKey({ columns: [table.emailHash, table.period] })],
)

/** The anchor_usage period of `now` (its UTC month), and when that month's quota resets. */
export function quotaPeriod(now = new Date()): { period: string; resetsAt: Date } {
  const year = now.getUTCFullYear()
  const month = now.getUTCMonth()
  return {
    period: `${year}-${String(month + 1).padStart(2, '0')}-01`,
    resetsAt: new Date(Date.UTC(year, month + 1, 1)),
  }
}

export const anchorUsage = pgTable(
  'anchor_usage',
  {
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    /** First day of the month, `YYYY-MM-01`. */
    period: text('period').notNull(),
    used: integer('used').notNull().default(0),
  },
  (table) => [primaryKey({ columns: [table.userId, table.period] })],
)

/**
 * Library items are keyed by (user, id): a client-chosen id can never reach another user's row. A deleted item
 * keeps its row as a tombstone (`deletedAt` set, content cleared) so an older upsert cannot bring it back.
 * `updatedAt` is the row's last-write-wins clock, the client's timestamp of the winning change: on a tombstone it
 * equals `deletedAt`. The primary key's leading `user_id` serves every per-user query, so no other index is kept.
 */
export const cloudSignatures = pgTable(
  'cloud_signatures',
  {
    id: uuid('id').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    label: text('label').notNull().default(''),
    base64Png: text('base64_png').notNull().default(''),
    /** The client's timestamp of the last change (of the deletion on a tombstone): the last-write-wins clock. */
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    /** The client's creation time of the item. */
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.userId, table.id] })],
)

export const cloudTextSnippets = pgTable(
  'cloud_text_snippets',
  {
    id: uuid('id').notNull(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    label: text('label').notNull().default(''),
    text: text('text').notNull().default(''),
    fontSize: doublePrecision('font_size').notNull().default(12),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 3 }).notNull(),
    deletedAt: timestamp('deleted_at', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (table) => [primaryKey({ columns: [table.userId, table.id] })],
)

/** The kinds of event an account is told of (docs/api.md, "Events"). */
export const EVENT_TYPES = [
  'anchor.confirmed',
  'anchor.finalized',
  'anchor.reorged',
  'anchor.failed',
  'anchor.countersigned',
  'webhook.test',
] as const

/**
 * The events of each account, written in the same database transaction as the change that causes them (an outbox:
 * none is lost or invented by a crash, a failover or a reorg). `seq` orders them for the feed's cursor; a row is
 * served only once every transaction that started before its own has ended (`xact_id` below the snapshot's xmin),
 * so a follower never passes an event that commits late with a lower `seq`.
 */
export const events = pgTable(
  'events',
  {
    seq: bigint('seq', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    /** `evt_` and 32 hex digits: the `webhook-id` of its deliveries. */
    id: text('id').notNull().unique(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    type: text('type', { enum: EVENT_TYPES }).notNull(),
    /** What a receiver needs to check the chain itself; never a ciphertext, a secret or another account's e-mail. */
    data: jsonb('data').notNull(),
    xactId: xid8('xact_id').notNull().default(sql`pg_current_xact_id()`),
    createdAt: createdAt(),
  },
  (table) => [index('events_user_seq_idx').on(table.userId, table.seq)],
)

export const WEBHOOK_STATUSES = ['enabled', 'disabled'] as const
export const WEBHOOK_DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const

/** An account's webhook endpoints (POST /api/webhooks). */
export const webhooks = pgTable(
  'webhooks',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    url: text('url').notNull(),
    /** The event types it receives; null: every type. */
    events: text('events').array(),
    description: text('description'),
    status: text('status', { enum: WEBHOOK_STATUSES }).notNull().default('enabled'),
    /** Why it was disabled: by its owner, answered 410 Gone, or failing for days. */
    disabledReason: text('disabled_reason', { enum: ['owner', 'gone', 'failing'] }),
    /** `whsec_…`: the HMAC key of its `v1` signatures, shown to its owner once. */
    secret: text('secret').notNull(),
    /** The secret before the last rotation, which keeps signing until `previous_secret_until`. */
    previousSecret: text('previous_secret'),
    previousSecretUntil: timestamp('previous_secret_until', { withTimezone: true, precision: 3 }),
    /** Since when every attempt failed; null after a success. */
    failingSince: timestamp('failing_since', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
    updatedAt: updatedAt(),
  },
  (table) => [index('webhooks_user_idx').on(table.userId)],
)

/** One event to one endpoint: created with the event (a trigger on `events`), tried until delivered or given up. */
export const webhookDeliveries = pgTable(
  'webhook_deliveries',
  {
    id: uuid('id').primaryKey().defaultRandom(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventSeq: bigint('event_seq', { mode: 'number' })
      .notNull()
      .references(() => events.seq, { onDelete: 'cascade' }),
    status: text('status', { enum: WEBHOOK_DELIVERY_STATUSES }).notNull().default('pending'),
    attempts: integer('attempts').notNull().default(0),
    /** When it is tried next (a pending one). */
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** While an attempt is under way: when it is given up for lost (the instance died) and may be tried again. */
    leasedUntil: timestamp('leased_until', { withTimezone: true, precision: 3 }),
    createdAt: createdAt(),
  },
  (table) => [
    uniqueIndex('webhook_deliveries_event_idx').on(table.webhookId, table.eventSeq),
    // The dispatcher's work: each endpoint's pending deliveries, in the order they fall due.
    index('webhook_deliveries_due_idx')
      .on(table.webhookId, table.nextAttemptAt)
      .where(sql`${table.status} = 'pending'`),
    index('webhook_deliveries_finished_idx').on(table.createdAt).where(sql`${table.status} <> 'pending'`),
  ],
)

/**
 * The e-mail telling an account that opted in of a countersignature: created with its `anchor.countersigned` event (the
 * trigger on `events`), sent by any instance (leased as webhook deliveries are), a few tries, then given up.
 */
export const noticeEmails = pgTable(
  'notice_emails',
  {
    eventSeq: bigint('event_seq', { mode: 'number' })
      .primaryKey()
      .references(() => events.seq, { onDelete: 'cascade' }),
    userId: uuid('user_id')
      .notNull()
      .references(() => users.id, { onDelete: 'cascade' }),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: timestamp('next_attempt_at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    leasedUntil: timestamp('leased_until', { withTimezone: true, precision: 3 }),
    /** When the mail server took it; null while it is still to be sent (or was given up: attempts at the limit). */
    sentAt: timestamp('sent_at', { withTimezone: true, precision: 3 }),
  },
  (table) => [index('notice_emails_due_idx').on(table.nextAttemptAt).where(sql`${table.sentAt} IS NULL`)],
)

/** Every attempt of a delivery, readable by the endpoint's owner (GET /api/webhooks/:id/attempts). */
export const webhookAttempts = pgTable(
  'webhook_attempts',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    webhookId: uuid('webhook_id')
      .notNull()
      .references(() => webhooks.id, { onDelete: 'cascade' }),
    eventId: text('event_id').notNull(),
    eventType: text('event_type').notNull(),
    attempt: integer('attempt').notNull(),
    at: timestamp('at', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
    /** The HTTP status, or `timeout`, `refused` (an address it may not call) or `error` (no answer). */
    status: text('status').notNull(),
    durationMs: integer('duration_ms').notNull(),
    /** A capped prefix of the answer's body. */
    response: text('response').notNull(),
  },
  (table) => [
    index('webhook_attempts_webhook_idx').on(table.webhookId, table.id),
    // What the retention removes, oldest first (src/events/webhook-retention.ts).
    index('webhook_attempts_at_idx').on(table.at),
  ],
)

/** The service's Ed25519 keys of `v1a` signatures, published at /.well-known/webhook-keys. */
export const webhookSigningKeys = pgTable('webhook_signing_keys', {
  kid: text('kid').primaryKey(),
  /** PKCS#8 DER, base64. */
  privateKey: text('private_key').notNull(),
  /** `whpk_…` */
  publicKey: text('public_key').notNull(),
  notBefore: timestamp('not_before', { withTimezone: true, precision: 3 }).notNull().defaultNow(),
  notAfter: timestamp('not_after', { withTimezone: true, precision: 3 }),
})
