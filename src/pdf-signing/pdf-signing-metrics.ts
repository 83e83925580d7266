// The signer CA's Prometheus series: outcomes of signature requests, timestamp requests per authority, whether the
// token key signs, and when the CA certificate expires (the alert PdfSigningCertificateExpiresSoon watches it).
import { Counter, Gauge, type Registry } from 'prom-client'

export type PdfSignatureOutcome =
  | 'created'
  | 'repeated'
  | 'conflict'
  | 'not_found'
  | 'not_confirmed'
  | 'too_late'
  | 'timestamp_unavailable'
  | 'chain_unavailable'
  | 'refused'
  | 'in_progress'

export interface PdfSigningMetrics {
  outcomes: Counter<'outcome'>
  timestampRequests: Counter<'authority' | 'outcome'>
  keyUp: Gauge
  certificateExpiry: Gauge
}

export function createPdfSigningMetrics(registry: Registry): PdfSigningMetrics {
  return {
    outcomes: new Counter({
      name: 'pdf_signatures_total',
      help: 'POST /api/pdf-signatures outcomes: created, repeated, conflict, not_found, not_confirmed, too_late, timestamp_unavailable, chain_unavailable, refused, in_progress',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    timestampRequests: new Counter({
      name: 'pdf_timestamp_requests_total',
      help: 'Requests to RFC 3161 time-stamping authorities, by authority (host) and outcome (ok, failed)',
      labelNames: ['authority', 'outcome'],
      registers: [registry],
    }),
    keyUp: new Gauge({
      name: 'pdf_signing_key_up',
      help: '1 while the signer CA key signs, 0 while its token does not answer',
      registers: [registry],
    }),
    certificateExpiry: new Gauge({
      name: 'pdf_signing_certificate_expiry_timestamp_seconds',
      help: 'When the signer CA certificate stops being valid (Unix time)',
      registers: [registry],
    }),
  }
}
