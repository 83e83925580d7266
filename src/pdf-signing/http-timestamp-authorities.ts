// RFC 3161 over HTTP: a TimeStampReq POSTed to each configured authority in turn until one answers with a token
// that verifies, chains to a configured root (TSA_TRUSTED_CERTIFICATES), timestamps the imprint asked for and echoes
// the nonce. Each attempt has its own timeout; all of
// them share a deadline and a number of attempts, so a signature waits a bounded time for its timestamp.

import { CMS_OID, checkTimestampToken } from '@docanchor/client'
import { Integer, OctetString } from 'asn1js'
import { AlgorithmIdentifier, type Certificate, MessageImprint, TimeStampReq, TimeStampResp } from 'pkijs'
import { TimestampUnavailableError } from './errors.ts'
import type { TimestampAuthority, TimestampToken } from './timestamp-authority.ts'

export interface HttpTimestampSettings {
  urls: string[]
  /** Longest wait for one authority's answer. */
  attemptTimeoutMs: number
  /** Longest wait for a token, all attempts together. */
  deadlineMs: number
  /** At most this many requests per token, over the authorities in turn. */
  attempts: number
  /**
   * The roots a token must chain to; empty takes any token that verifies (outside production only, where the
   * configuration requires roots).
   */
  roots: Certificate[]
}

export interface TimestampEvents {
  /** One attempt's outcome, for metrics and logs: `reason` is the authority's fault in a few words. */
  onAttempt(url: string, outcome: 'ok' | 'failed', reason?: string): void
}

/** A reply larger than this is no timestamp token (they are a few kilobytes, certificates included). */
const MAX_REPLY_BYTES = 64 * 1024

export function httpTimestampAuthorities(settings: HttpTimestampSettings, events: TimestampEvents): TimestampAuthority {
  /** The authority to ask first: the last one that answered. */
  let preferred = 0
  return {
    roots: settings.roots,
    issuedByService: [],
    async timestamp(imprint) {
      const deadline = Date.now() + settings.deadlineMs
      const reasons: string[] = []
      for (let attempt = 0; attempt < settings.attempts; attempt++) {
        const left = deadline - Date.now()
        if (left <= 0) break
        const index = (preferred + attempt) % settings.urls.length
        const url = settings.urls[index]!
        try {
          const token = await requestToken(url, imprint, settings.roots, Math.min(left, settings.attemptTimeoutMs))
          preferred = index
          events.onAttempt(url, 'ok')
          return token
        } catch (error) {
          const reason = error instanceof Error ? error.message : String(error)
          reasons.push(`${new URL(url).host}: ${reason}`)
          events.onAttempt(url, 'failed', reason)
        }
      }
      throw new TimestampUnavailableError(
        `no time-stamping authority answered (${reasons.join('; ') || 'no time left'})`,
      )
    },
  }
}

async function requestToken(
  url: string,
  imprint: Uint8Array,
  roots: Certificate[],
  timeoutMs: number,
): Promise<TimestampToken> {
  const nonce = crypto.getRandomValues(new Uint8Array(8))
  nonce[0] = (nonce[0]! & 0x7f) | 0x01
  const request = new TimeStampReq({
    version: 1,
    messageImprint: new MessageImprint({
      hashAlgorithm: new AlgorithmIdentifier({ algorithmId: CMS_OID.sha256 }),
      hashedMessage: new OctetString({ valueHex: new Uint8Array(imprint).buffer }),
    }),
    nonce: new Integer({ valueHex: nonce.buffer }),
    certReq: true,
  })
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/timestamp-query', accept: 'application/timestamp-reply' },
    body: new Uint8Array(request.toSchema().toBER(false)),
    signal: AbortSignal.timeout(timeoutMs),
  }).catch((error: unknown) => {
    throw new Error((error as Error).name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'unreachable')
  })
  if (!response.ok) throw new Error(`HTTP ${response.status}`)
  const body = new Uint8Array(await response.arrayBuffer())
  if (body.length > MAX_REPLY_BYTES) throw new Error('the reply is too large')
  let reply: TimeStampResp
  try {
    reply = TimeStampResp.fromBER(new Uint8Array(body).buffer)
  } catch {
    throw new Error('the reply is not a timestamp response')
  }
  // 0: granted, 1: granted with modifications; anything else is a refusal.
  if (reply.status.status > 1 || !reply.timeStampToken) throw new Error(`refused (status ${reply.status.status})`)
  const der = new Uint8Array(reply.timeStampToken.toSchema().toBER(false))
  const check = await checkTimestampToken(der, { sha256: imprint }, roots)
  if (!check.valid || !check.time || !check.authority)
    throw new Error(check.problems.join('; ') || 'an unreadable token')
  if (roots.length > 0 && !check.trusted) {
    throw new Error('the token does not chain to TSA_TRUSTED_CERTIFICATES, or its certificate is not for timestamping')
  }
  if (check.nonce !== new Integer({ valueHex: nonce.buffer }).toBigInt())
    throw new Error('the token does not echo the nonce')
  return { der, time: check.time, authority: check.authority }
}
