// Where the signature timestamp (PAdES B-T) comes from: the configured RFC 3161 authorities over HTTP
// (http-timestamp-authorities.ts), or the embedded default's own development TSA (development-timestamp-authority.ts).
// The same authority timestamps signatures (over their value) and documents (over a PDF's byte range, PAdES B-LTA).

import type { Certificate } from 'pkijs'

export interface TimestampToken {
  /** The TimeStampToken's DER (a CMS ContentInfo), checked: it verifies and timestamps what was asked for. */
  der: Uint8Array
  /** The time the authority states. */
  time: Date
  /** The authority's name, as its certificate gives it. */
  authority: string
}

export interface TimestampAuthority {
  /**
   * A token whose imprint is `imprint` (a SHA-256 digest: of a signature's value, or of a PDF's byte range), checked
   * against `roots`; throws TimestampUnavailableError when no authority answers with one.
   */
  timestamp(imprint: Uint8Array): Promise<TimestampToken>
  /** The roots its tokens chain to: what verifiers are told to trust for timestamps. */
  readonly roots: Certificate[]
  /** Its own certificates when the service's CA issued them (the development TSA), for the CA's OCSP to answer. */
  readonly issuedByService: Certificate[]
}
