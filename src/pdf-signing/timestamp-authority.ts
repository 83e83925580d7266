// Where the signature timestamp (PAdES B-T) comes from: the configured RFC 3161 authorities over HTTP
// (http-timestamp-authorities.ts), or the embedded default's own development TSA (development-timestamp-authority.ts).

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
   * A token over the SHA-256 of `timestamped` (a signature's value); throws TimestampUnavailableError when no
   * authority answers.
   */
  timestamp(timestamped: Uint8Array): Promise<TimestampToken>
}

export class TimestampUnavailableError extends Error {
  override name = 'TimestampUnavailableError'
}
