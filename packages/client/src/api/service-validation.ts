// Long-term validation with the service: its time-stamping authority for the document timestamps, its OCSP responder
// for its CA's certificates, and each other certificate's own responder or CRL.
import { pemCertificates } from '../pdf/cms/der.ts'
import type { LongTermValidationOptions } from '../pdf/long-term-validation.ts'
import { revocationSource } from '../pdf/revocation-source.ts'
import type { AnchorClient } from './anchor-client.ts'
import type { ServiceInfo } from './api-schemas.ts'

export function serviceLongTermValidation(
  api: Pick<AnchorClient, 'documentTimestamp'>,
  info: Pick<ServiceInfo, 'pdfSigning'>,
  options: { fetch?: typeof fetch } = {},
): LongTermValidationOptions {
  return {
    documentTimestamp: (digest) => api.documentTimestamp(digest),
    revocation: revocationSource({
      serviceOcspUrl: info.pdfSigning.ocspUrl,
      serviceCertificates: info.pdfSigning.certificates.flatMap(pemCertificates),
      fetch: options.fetch,
    }),
  }
}
