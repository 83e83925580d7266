// The certificates the CA issued signers, and their revocation: every issued certificate is recorded before it is
// answered, so that none exists the revocation status does not know of.

import { certificateDer } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import type { Certificate } from 'pkijs'
import type { Database } from '../db/database.ts'
import { type Executor, rows } from '../db/sql-rows.ts'
import { serialOf } from './signer-certificate.ts'

/** The certificate's DER, base64: how the API hands certificates out and the store keeps them. */
export const certificateBase64 = (certificate: Certificate) =>
  Buffer.from(certificateDer(certificate)).toString('base64')

export interface SignerCertificateStatus {
  userId: string | null
  revokedAt: Date | null
}

export async function recordSignerCertificate(db: Database, userId: string, certificate: Certificate): Promise<void> {
  await db.execute(
    sql`INSERT INTO signer_certificates (serial, user_id, certificate, not_after)
        VALUES (${serialOf(certificate)}, ${userId}, ${certificateBase64(certificate)},
                ${certificate.notAfter.value.toISOString()})`,
  )
}

export async function signerCertificateStatus(db: Database, serial: string): Promise<SignerCertificateStatus | null> {
  const [row] = await rows<{ user_id: string | null; revoked_at: Date | string | null }>(
    db,
    sql`SELECT user_id, revoked_at FROM signer_certificates WHERE serial = ${serial}`,
  )
  if (!row) return null
  return { userId: row.user_id, revokedAt: row.revoked_at === null ? null : new Date(row.revoked_at) }
}

/**
 * Revokes every certificate of the account not revoked yet; `deleted` also forgets the certificates themselves (they
 * name the e-mail), keeping what a revocation list needs.
 */
export async function revokeSignerCertificates(
  db: Executor,
  userId: string,
  reason: 'deleted' | 'blocked',
): Promise<void> {
  await db.execute(
    sql`UPDATE signer_certificates
        SET revoked_at = COALESCE(revoked_at, now()), revocation_reason = COALESCE(revocation_reason, ${reason}),
            certificate = CASE WHEN ${reason} = 'deleted' THEN NULL ELSE certificate END
        WHERE user_id = ${userId}`,
  )
}
