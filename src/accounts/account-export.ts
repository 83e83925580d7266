// Everything the service holds about one user, as one document (GET /api/account/export): the account with its plan
// and this month's usage, its sessions (never their tokens: only a hash is stored, and even that stays here), the
// certificates the CA issued its keys, its anchors with their ciphertexts, attestations and PDF signatures, the events
// it was told of them, and its library with the deletion markers.
// Read in one repeatable-read transaction, one snapshot, so the parts agree with one another.
import { sql } from 'drizzle-orm'
import { monthlyLimitOf, type PlanLimits } from '../auth/users.ts'
import type { Database } from '../db/database.ts'
import { quotaPeriod, UNSIGNED_PREFIX } from '../db/schema.ts'
import { type Executor, isoTimestamp, rows } from '../db/sql-rows.ts'

const iso = isoTimestamp

/** One snapshot for every statement of the export (READ COMMITTED would take one per statement). */
const SNAPSHOT = { isolationLevel: 'repeatable read', accessMode: 'read only' } as const

export interface AccountExport {
  exportedAt: string
  account: {
    id: string
    email: string
    name: string | null
    authProvider: string
    /** The provider's subject for this account (Google's or Microsoft's id of the user); null for e-mail only. */
    providerId: string | null
    plan: string
    /** An operator's monthly limit for this account alone; null: the plan's. */
    monthlyLimit: number | null
    blockedAt: string | null
    /** The e-mails the account asked for (PUT /api/account/notifications). */
    notifications: { countersigned: boolean }
    createdAt: string
    usage: { period: string; used: number; limit: number }
    /** Anchors counted in each month, the current one included. */
    usageHistory: { period: string; used: number }[]
  }
  /** What operators did to the account (the operator's own name is theirs, not the user's, and stays out). */
  operatorActions: { at: string; action: string; before: unknown; after: unknown }[]
  sessions: { id: string; provider: string; createdAt: string; expiresAt: string; revokedAt: string | null }[]
  /** The certificates the service's CA issued the account's keys (DER, base64), and their revocation. */
  signerCertificates: {
    serialNumber: string
    certificate: string
    createdAt: string
    notAfter: string
    revokedAt: string | null
  }[]
  anchors: ExportedAnchor[]
  /** What the account was told of its anchors (GET /api/events), oldest first. */
  events: { id: string; type: string; timestamp: string; data: unknown }[]
  library: {
    signatures: ExportedLibraryItem<{ base64Png: string }>[]
    snippets: ExportedLibraryItem<{ text: string; fontSize: number }>[]
  }
}

export interface ExportedAnchor {
  txHash: string
  compositeHash: string
  previousTxHash: string
  chainId: number
  status: string
  blockNumber: number | null
  encryptedPayload: string | null
  attestation: { trust: string; verified: boolean; identityCommitment: string } | null
  pdfSignature: { digest: string; timestampTime: string; timestampAuthority: string } | null
  createdAt: string
  confirmedAt: string | null
}

/** A library item; a deleted one keeps only its id and when it was deleted (the marker other devices sync from). */
export type ExportedLibraryItem<Content> =
  | ({ id: string; label: string; createdAt: string; updatedAt: string; deletedAt: null } & Content)
  | { id: string; deletedAt: string }

/** The user's export; undefined when the account no longer exists. */
export async function exportAccount(
  db: Database,
  userId: string,
  limits: PlanLimits,
  now = new Date(),
): Promise<AccountExport | undefined> {
  return db.transaction(async (tx) => {
    const [user] = await rows(
      tx,
      sql`SELECT id, email, name, auth_provider, provider_id, plan, monthly_limit, notify_countersigned,
          ${iso('blocked_at')} AS blocked_at, ${iso('created_at')} AS created_at
        FROM users WHERE id = ${userId}`,
    )
    if (!user) return undefined
    const { period } = quotaPeriod(now)
    const usageHistory = await rows<{ period: string; used: number }>(
      tx,
      sql`SELECT period, used FROM anchor_usage WHERE user_id = ${userId} ORDER BY period`,
    )
    const actions = await rows(
      tx,
      sql`SELECT ${iso('at')} AS at, action, before, after FROM operator_audit WHERE user_id = ${userId} ORDER BY at, id`,
    )
    return {
      exportedAt: now.toISOString(),
      account: {
        id: String(user.id),
        email: String(user.email),
        name: user.name === null ? null : String(user.name),
        authProvider: String(user.auth_provider),
        providerId: user.provider_id === null ? null : String(user.provider_id),
        plan: String(user.plan),
        monthlyLimit: user.monthly_limit === null ? null : Number(user.monthly_limit),
        blockedAt: user.blocked_at === null ? null : String(user.blocked_at),
        notifications: { countersigned: user.notify_countersigned === true },
        createdAt: String(user.created_at),
        usage: {
          period,
          used: Number(usageHistory.find((month) => month.period === period)?.used ?? 0),
          limit: monthlyLimitOf(limits, {
            plan: String(user.plan),
            monthlyLimit: user.monthly_limit === null ? null : Number(user.monthly_limit),
          }),
        },
        usageHistory: usageHistory.map((month) => ({ period: String(month.period), used: Number(month.used) })),
      },
      operatorActions: actions.map((row) => ({
        at: String(row.at),
        action: String(row.action),
        before: row.before,
        after: row.after,
      })),
      sessions: await exportedSessions(tx, userId),
      signerCertificates: await exportedSignerCertificates(tx, userId),
      anchors: await exportedAnchors(tx, userId),
      events: await exportedEvents(tx, userId),
      library: await exportedLibrary(tx, userId),
    }
  }, SNAPSHOT)
}

async function exportedSignerCertificates(db: Executor, userId: string): Promise<AccountExport['signerCertificates']> {
  const found = await rows(
    db,
    sql`SELECT serial, certificate, ${iso('created_at')} AS created_at, ${iso('not_after')} AS not_after,
          ${iso('revoked_at')} AS revoked_at
        FROM signer_certificates WHERE user_id = ${userId} ORDER BY created_at, serial`,
  )
  return found.map((r) => ({
    serialNumber: String(r.serial),
    certificate: String(r.certificate),
    createdAt: String(r.created_at),
    notAfter: String(r.not_after),
    revokedAt: r.revoked_at === null ? null : String(r.revoked_at),
  }))
}

async function exportedEvents(db: Executor, userId: string): Promise<AccountExport['events']> {
  const found = await rows(
    db,
    sql`SELECT id, type, ${iso('created_at')} AS created_at, data FROM events WHERE user_id = ${userId} ORDER BY seq`,
  )
  return found.map((r) => ({
    id: String(r.id),
    type: String(r.type),
    timestamp: String(r.created_at),
    data: typeof r.data === 'string' ? JSON.parse(r.data) : r.data,
  }))
}

async function exportedSessions(db: Executor, userId: string): Promise<AccountExport['sessions']> {
  const found = await rows(
    db,
    sql`SELECT id, trust, ${iso('created_at')} AS created_at, ${iso('expires_at')} AS expires_at,
          ${iso('revoked_at')} AS revoked_at
        FROM sessions WHERE user_id = ${userId} ORDER BY created_at, id`,
  )
  return found.map((r) => ({
    id: String(r.id),
    provider: String(r.trust),
    createdAt: String(r.created_at),
    expiresAt: String(r.expires_at),
    revokedAt: r.revoked_at === null ? null : String(r.revoked_at),
  }))
}

async function exportedAnchors(db: Executor, userId: string): Promise<ExportedAnchor[]> {
  const found = await rows(
    db,
    sql`SELECT a.tx_hash, a.composite_hash, a.previous_tx_hash, a.chain_id, a.status, a.block_number,
          a.encrypted_payload, a.identity_commitment, a.attested_trust, a.attested_verified,
          ${iso('a.created_at')} AS created_at, ${iso('a.confirmed_at')} AS confirmed_at,
          p.digest, ${iso('p.timestamp_time')} AS timestamp_time, p.timestamp_authority
        FROM anchors a LEFT JOIN pdf_signatures p ON p.anchor_id = a.id AND p.cms IS NOT NULL
        WHERE a.user_id = ${userId} AND a.tx_hash NOT LIKE ${`${UNSIGNED_PREFIX}%`}
        ORDER BY a.created_at, a.id`,
  )
  return found.map((r) => ({
    txHash: String(r.tx_hash),
    compositeHash: String(r.composite_hash),
    previousTxHash: String(r.previous_tx_hash),
    chainId: Number(r.chain_id),
    status: String(r.status),
    blockNumber: r.block_number === null ? null : Number(r.block_number),
    encryptedPayload: r.encrypted_payload === null ? null : String(r.encrypted_payload),
    attestation:
      r.identity_commitment === null
        ? null
        : {
            trust: String(r.attested_trust),
            verified: Boolean(r.attested_verified),
            identityCommitment: String(r.identity_commitment),
          },
    pdfSignature:
      r.digest === null
        ? null
        : {
            digest: String(r.digest),
            timestampTime: String(r.timestamp_time),
            timestampAuthority: String(r.timestamp_authority),
          },
    createdAt: String(r.created_at),
    confirmedAt: r.confirmed_at === null ? null : String(r.confirmed_at),
  }))
}

async function exportedLibrary(db: Executor, userId: string): Promise<AccountExport['library']> {
  const found = await rows(
    db,
    sql`SELECT 's' AS kind, id, label, base64_png AS content, NULL::float8 AS font_size,
          ${iso('created_at')} AS created_at, ${iso('updated_at')} AS updated_at, ${iso('deleted_at')} AS deleted_at
        FROM cloud_signatures WHERE user_id = ${userId}
        UNION ALL
        SELECT 'n', id, label, text, font_size, ${iso('created_at')}, ${iso('updated_at')}, ${iso('deleted_at')}
        FROM cloud_text_snippets WHERE user_id = ${userId}
        ORDER BY kind, created_at, id`,
  )
  const library: AccountExport['library'] = { signatures: [], snippets: [] }
  for (const r of found) {
    const id = String(r.id)
    if (r.deleted_at !== null) {
      const marker = { id, deletedAt: String(r.deleted_at) }
      if (r.kind === 's') library.signatures.push(marker)
      else library.snippets.push(marker)
      continue
    }
    const item = {
      id,
      label: String(r.label),
      createdAt: String(r.created_at),
      updatedAt: String(r.updated_at),
      deletedAt: null,
    }
    if (r.kind === 's') library.signatures.push({ ...item, base64Png: String(r.content) })
    else library.snippets.push({ ...item, text: String(r.content), fontSize: Number(r.font_size) })
  }
  return library
}
