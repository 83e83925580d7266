// The client's address of a request Fastify has not routed (an early answer, early-answers.ts), as Fastify's
// `request.ip` gives it for a routed one: the socket's peer; behind a proxy (TRUST_PROXY=true, every hop trusted),
// the furthest address X-Forwarded-For names, found by the library Fastify uses.
import type { IncomingMessage } from 'node:http'
import proxyAddr from '@fastify/proxy-addr'

export type ClientAddress = (request: IncomingMessage) => string | undefined

export function clientAddress(trustProxy: boolean): ClientAddress {
  if (!trustProxy) return (request) => request.socket.remoteAddress
  const trustEveryHop = () => true
  return (request) => proxyAddr.all(request, trustEveryHop).at(-1)
}
