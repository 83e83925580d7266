// The signer CA's public face, named in every certificate it issues (AIA, CRL distribution point): its certificate
// (GET /ca/issuer.cer), its revocation list (GET /ca/crl) and an OCSP responder (POST /ca/ocsp, RFC 6960 over HTTP),
// all signed with the CA's own key. Public and limited per address like verification; the list is made at most once
// a minute, so a flood of readers costs the CA's key nothing more.
import { certificateDer } from '@docanchor/client'
import { sql } from 'drizzle-orm'
import { rows } from '../../db/sql-rows.ts'
import {
  type CertificateStatus,
  malformedOcspResponse,
  OcspRequestError,
  ocspResponse,
  revocationList,
} from '../../pdf-signing/revocation-status.ts'
import { STATUS_PATHS } from '../../pdf-signing/signer-certificate.ts'
import { signerCertificateStatus } from '../../pdf-signing/signer-certificate-store.ts'
import type { AppInstance } from '../app-types.ts'

/** A list is signed again once it is this old: every reader of the minute gets the same bytes. */
const LIST_REFRESH_MS = 60_000
/** An OCSP request names a few certificates: a few hundred bytes. */
const MAX_OCSP_REQUEST_BYTES = 4096

export async function certificateStatusRoutes(app: AppInstance): Promise<void> {
  const { config, database } = app.deps
  const authority = app.signerAuthority
  const issuerDer = Buffer.from(certificateDer(authority.certificates[0]!))
  const limitPerIp = app.limiter({
    name: 'ca-status',
    max: config.limits.verifyPerIpPerMinute,
    timeWindowMs: 60_000,
    what: 'certificate status requests',
  })
  let list: { der: Buffer; madeAt: number } | undefined

  app.addContentTypeParser(
    'application/ocsp-request',
    { parseAs: 'buffer', bodyLimit: MAX_OCSP_REQUEST_BYTES },
    (_request, body, done) => done(null, body),
  )

  app.get(STATUS_PATHS.issuer, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/pkix-cert').header('cache-control', 'public, max-age=86400').send(issuerDer),
  )

  app.get(STATUS_PATHS.crl, { onRequest: limitPerIp.onRequest, schema: { hide: true } }, async (_request, reply) => {
    if (!list || Date.now() - list.madeAt > LIST_REFRESH_MS) {
      const revoked = await rows<{ serial: string; revoked_at: Date | string }>(
        database.db,
        sql`SELECT serial, revoked_at FROM signer_certificates
            WHERE revoked_at IS NOT NULL AND not_after > now() ORDER BY revoked_at, serial`,
      )
      const der = await revocationList(
        authority.issuer,
        revoked.map((row) => ({ serial: row.serial, at: new Date(row.revoked_at) })),
      )
      list = { der: Buffer.from(der), madeAt: Date.now() }
    }
    return reply.type('application/pkix-crl').header('cache-control', 'public, max-age=60').send(list.der)
  })

  app.post(
    STATUS_PATHS.ocsp,
    { onRequest: limitPerIp.onRequest, bodyLimit: MAX_OCSP_REQUEST_BYTES, schema: { hide: true } },
    async (request, reply) => {
      reply.type('application/ocsp-response').header('cache-control', 'no-store')
      const body = request.body
      if (!Buffer.isBuffer(body)) return reply.send(Buffer.from(malformedOcspResponse()))
      const statusOf = async (serial: string): Promise<CertificateStatus> => {
        const status = await signerCertificateStatus(database.db, serial)
        if (!status) return { state: authority.issuedToService(serial) ? 'good' : 'unknown' }
        return status.revokedAt ? { state: 'revoked', at: status.revokedAt } : { state: 'good' }
      }
      try {
        return reply.send(Buffer.from(await ocspResponse(authority.issuer, new Uint8Array(body), statusOf)))
      } catch (error) {
        if (error instanceof OcspRequestError) return reply.send(Buffer.from(malformedOcspResponse()))
        throw error
      }
    },
  )
}
