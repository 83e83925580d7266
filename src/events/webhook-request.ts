// One delivery attempt: a POST to the endpoint that checks the address when the connection is made, after DNS, so a
// name that resolves to a private address (or rebinds to one between a check and the connection), an IPv4-mapped or
// NAT64 form of one, or a redirect to one never reaches it. Only public unicast addresses pass, and the networks the
// operator lists (WEBHOOK_ALLOWED_NETWORKS). Redirects are not followed (a 3xx is a failed attempt); the whole attempt
// has one deadline; at most RESPONSE_BYTES of the answer are read.
import { type LookupAddress, lookup } from 'node:dns'
import { request as httpRequest, type IncomingMessage } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP, type LookupFunction } from 'node:net'
import ipaddr from 'ipaddr.js'
import type { WebhookSettings } from '../config/webhook-settings.ts'

/** What an attempt keeps of the answer: enough to tell its owner why it failed. */
const RESPONSE_BYTES = 1_024

export type AttemptOutcome =
  | { kind: 'answered'; status: number; response: string; retryAfterMs: number | undefined }
  | { kind: 'timeout' | 'refused' | 'error'; response: string }

export class RefusedAddressError extends Error {
  override name = 'RefusedAddressError'
  readonly code = 'WEBHOOK_ADDRESS_REFUSED'
}

type Policy = Pick<WebhookSettings, 'allowedNetworks' | 'httpsOnly'>

/** Whether the service may connect to `address` (an IP literal). */
export function addressAllowed(address: string, policy: Policy): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6
  try {
    parsed = ipaddr.parse(address)
  } catch {
    return false
  }
  // An IPv4 address in IPv6 clothing is judged as the IPv4 address it reaches.
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.isIPv4MappedAddress()) parsed = v6.toIPv4Address()
    else if (v6.range() === 'rfc6052') parsed = ipaddr.fromByteArray(v6.toByteArray().slice(12))
  }
  if (
    policy.allowedNetworks.some(([network, bits]) => network.kind() === parsed.kind() && parsed.match(network, bits))
  ) {
    return true
  }
  return parsed.range() === 'unicast'
}

/** Why a URL may not be registered or called, or undefined when it may (its name is checked again when called). */
export function urlRefusal(url: string, policy: Policy): string | undefined {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return 'not an absolute URL'
  }
  if (parsed.protocol !== 'https:' && (policy.httpsOnly || parsed.protocol !== 'http:')) {
    return policy.httpsOnly ? 'only https URLs' : 'only http and https URLs'
  }
  if (parsed.username !== '' || parsed.password !== '') return 'no credentials in the URL'
  const host = parsed.hostname.replace(/^\[|\]$/g, '')
  if (isIP(host) && !addressAllowed(host, policy)) return 'an address the service may not call'
  return undefined
}

/** The name's addresses, all of them allowed, or RefusedAddressError: what the connection then uses. */
function checkedLookup(policy: Policy): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (error, addresses: LookupAddress[]) => {
      if (error) return callback(error, '', 4)
      if (addresses.length === 0 || addresses.some((entry) => !addressAllowed(entry.address, policy))) {
        return callback(new RefusedAddressError(`${hostname} resolves to an address the service may not call`), '', 4)
      }
      if (options.all) return (callback as unknown as (e: null, all: LookupAddress[]) => void)(null, addresses)
      return callback(null, addresses[0]!.address, addresses[0]!.family)
    })
  }
}

export function postDelivery(
  url: string,
  headers: Record<string, string>,
  body: string,
  settings: Pick<WebhookSettings, 'allowedNetworks' | 'httpsOnly' | 'timeoutMs'>,
): Promise<AttemptOutcome> {
  const refusal = urlRefusal(url, settings)
  if (refusal) return Promise.resolve({ kind: 'refused', response: refusal })
  const target = new URL(url)
  const send = target.protocol === 'https:' ? httpsRequest : httpRequest
  return new Promise((resolve) => {
    let settled = false
    const finish = (outcome: AttemptOutcome) => {
      if (settled) return
      settled = true
      clearTimeout(deadline)
      request.destroy()
      resolve(outcome)
    }
    const request = send(
      target,
      {
        method: 'POST',
        headers: { ...headers, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        lookup: checkedLookup(settings),
        // A fresh connection per attempt: no pooled socket to an address checked for another name.
        agent: false,
      },
      (response) => readAnswer(response).then(finish),
    )
    const deadline = setTimeout(() => finish({ kind: 'timeout', response: '' }), settings.timeoutMs)
    request.on('error', (error) =>
      finish(
        error instanceof RefusedAddressError
          ? { kind: 'refused', response: error.message }
          : { kind: 'error', response: (error as NodeJS.ErrnoException).code ?? error.name },
      ),
    )
    request.end(body)
  })
}

async function readAnswer(response: IncomingMessage): Promise<AttemptOutcome> {
  const chunks: Buffer[] = []
  let size = 0
  try {
    for await (const chunk of response as AsyncIterable<Buffer>) {
      chunks.push(chunk)
      size += chunk.length
      if (size >= RESPONSE_BYTES) break
    }
  } catch {
    // A body cut off is still an answer: its status says what happened.
  }
  return {
    kind: 'answered',
    status: response.statusCode ?? 0,
    response: Buffer.concat(chunks).subarray(0, RESPONSE_BYTES).toString('utf8'),
    retryAfterMs: retryAfterMs(response.headers['retry-after']),
  }
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from now. */
function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value.trim())) return Number(value) * 1000
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now())
}
