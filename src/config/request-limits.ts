// What one request, one address or one account may send: body sizes, the time to send a request, and the rates of
// sign-in codes, relays and verifications.
import { type EnvValues, integer } from './env-fields.ts'

export const requestLimitsEnv = {
  BODY_LIMIT_BYTES: integer(64 * 1024, 1024),
  LIBRARY_BODY_LIMIT_BYTES: integer(16 * 1024 * 1024, 1024),
  /**
   * The longest a client may take to send a whole request, headers and body: a request trickled in a byte at a time
   * would otherwise hold its connection for as long as the client likes. 16 MiB of library in 60 s is 2.3 Mbit/s.
   */
  REQUEST_TIMEOUT_MS: integer(60_000, 1_000),
  CODE_SENDS_PER_EMAIL_PER_HOUR: integer(5, 1),
  CODE_REQUESTS_PER_IP_PER_HOUR: integer(60, 1),
  CODE_VERIFICATIONS_PER_IP_PER_HOUR: integer(120, 1),
  RELAY_PER_USER_PER_MINUTE: integer(60, 1),
  VERIFY_PER_IP_PER_MINUTE: integer(600, 1),
}

export function requestLimits(e: EnvValues<typeof requestLimitsEnv>) {
  return {
    bodyBytes: e.BODY_LIMIT_BYTES,
    libraryBodyBytes: e.LIBRARY_BODY_LIMIT_BYTES,
    requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
    codeSendsPerEmailPerHour: e.CODE_SENDS_PER_EMAIL_PER_HOUR,
    codeRequestsPerIpPerHour: e.CODE_REQUESTS_PER_IP_PER_HOUR,
    codeVerificationsPerIpPerHour: e.CODE_VERIFICATIONS_PER_IP_PER_HOUR,
    relayPerUserPerMinute: e.RELAY_PER_USER_PER_MINUTE,
    verifyPerIpPerMinute: e.VERIFY_PER_IP_PER_MINUTE,
  }
}
