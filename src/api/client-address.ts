// The client's address of a request Fastify has not routed (an early answer, early-answers.ts), as Fastify's
// `request.ip` gives it for a routed one: the socket's peer, or behind trusted proxies (TRUST_PROXY) the address the
// nearest untrusted hop of X-Forwarded-For names, found by the library Fastify uses with the trust Fastify compiles.
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'
import type { TrustProxy } from '../config.ts'

export type ClientAddress = (request: IncomingMessage) => string | undefined

export function clientAddress(trustProxy: TrustProxy): ClientAddress {
  if (trustProxy === false) return (request) => request.socket.remoteAddress
  const trust = trustOf(trustProxy)
  return (request) => proxyAddr(request, trust)
}

/** Fastify's own compilation of its trustProxy option (getTrustProxyFn in fastify/lib/request.js). */
function trustOf(trustProxy: Exclude<TrustProxy, false>): (address: string, hop: number) => boolean {
  return trustProxy === true ? () => true : proxyAddr.compile(trustProxy)
}
