// The process and its HTTP face: production or not, where it listens and is reached, what it logs, which proxies it
// trusts, its database and Redis, and the API the verification page calls.
import { isIP } from 'node:net'
import { z } from 'zod'
import { booleanFlag, type EnvValues, integer, list, optionalString, trimSlash } from './env-fields.ts'

const MIN_METRICS_TOKEN_CHARACTERS = 32
/** One year: the usual HSTS lifetime, and what browsers' preload lists ask for. */
const DEFAULT_HSTS_MAX_AGE_SECONDS = 31_536_000

export const serverEnv = {
  NODE_ENV: optionalString,
  PRODUCTION: booleanFlag,
  HOST: optionalString,
  PORT: integer(3000),
  DATA_DIR: z.string().default('./data'),
  PUBLIC_URL: optionalString,
  VERIFY_BASE_URL: optionalString,
  APP_SCHEME: z
    .string()
    .regex(/^[a-z][a-z0-9+.-]*$/, 'a URL scheme such as "docanchor"')
    .default('docanchor'),
  CORS_ORIGINS: list,
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Which requests get a log line: every one, failed or slow ones only, or none; see requestLog below. */
  REQUEST_LOG: z.enum(['all', 'failed-or-slow', 'off']).optional(),
  REQUEST_LOG_SLOW_MS: integer(1000, 1),
  /** What Fastify's trustProxy takes: the proxies' addresses or CIDRs (see trustProxyOf). */
  TRUST_PROXY: optionalString,
  /** Bearer token GET /metrics requires; required in production, where the series name relayers and balances. */
  METRICS_TOKEN: optionalString,
  /** Strict-Transport-Security max-age when PUBLIC_URL is https; defaults to a year in production, 0 turns it off. */
  HSTS_MAX_AGE_SECONDS: z.coerce.number().int().min(0).optional(),
  SHUTDOWN_TIMEOUT_MS: integer(10_000, 100),
  DATABASE_URL: optionalString,
  REDIS_URL: optionalString,
  /** The API the verification page calls; empty: the origin that serves the page. */
  WEB_API_BASE_URL: optionalString,
}

export type TrustProxy = boolean | string[]

/** The URLs as configured; those not configured default to the service's own address (serviceUrls). */
export interface ConfiguredUrls {
  publicUrl: string | undefined
  verifyBaseUrl: string | undefined
  corsOrigins: string[]
}

export function isProduction(e: EnvValues<typeof serverEnv>): boolean {
  return e.PRODUCTION || e.NODE_ENV === 'production'
}

export function serverSettings(e: EnvValues<typeof serverEnv>, production: boolean, problems: string[]) {
  if (e.METRICS_TOKEN !== undefined && e.METRICS_TOKEN.length < MIN_METRICS_TOKEN_CHARACTERS) {
    problems.push(`METRICS_TOKEN: must be at least ${MIN_METRICS_TOKEN_CHARACTERS} characters`)
  }
  const trustProxy = trustProxyOf(e.TRUST_PROXY, production, problems)
  if (e.WEB_API_BASE_URL !== undefined && !/^https?:\/\/[^\s?#]+$/i.test(e.WEB_API_BASE_URL)) {
    problems.push('WEB_API_BASE_URL: must be an absolute http(s) URL without query or fragment')
  }
  const host = e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1')
  const configuredUrls: ConfiguredUrls = {
    publicUrl: e.PUBLIC_URL,
    verifyBaseUrl: e.VERIFY_BASE_URL,
    corsOrigins: e.CORS_ORIGINS,
  }
  const { publicUrl, verifyBaseUrl, corsOrigins } = serviceUrls(host, configuredUrls, e.PORT)
  return {
    production,
    host,
    port: e.PORT,
    dataDir: e.DATA_DIR,
    /** The service's own public URL; the default base of QR URLs. */
    publicUrl,
    verifyBaseUrl,
    appScheme: e.APP_SCHEME,
    corsOrigins,
    /**
     * What publicUrl, verifyBaseUrl and corsOrigins were configured as: those not configured default to the service's
     * own address, which for PORT=0 is known only once a free port is picked (service.ts, with serviceUrls).
     */
    configuredUrls,
    logLevel: e.LOG_LEVEL,
    /**
     * The service's per-request log lines (src/api/request-log-policy.ts). `all`: Fastify's two lines for every
     * request (the development default). `failed-or-slow`: one line for a request answered 5xx, ended by an error, or
     * slower than `slowMs`, with what the two lines carried (the production default: the load balancer writes the
     * access log line of every request, so the instances log only what needs their view). `off`: none (errors are
     * still logged).
     */
    requestLog: {
      mode: e.REQUEST_LOG ?? (production ? ('failed-or-slow' as const) : ('all' as const)),
      slowMs: e.REQUEST_LOG_SLOW_MS,
    },
    /**
     * Which X-Forwarded-For hops are the service's own proxies, as Fastify's `trustProxy` takes it: false (none: the
     * socket's peer is the client), or their addresses or CIDRs. `true` trusts every hop, which a client can write
     * itself: refused in production, warned about at start otherwise.
     */
    trustProxy,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    /** Seconds of the Strict-Transport-Security header; 0: none (never sent unless PUBLIC_URL is https). */
    hstsMaxAgeSeconds: publicUrl.startsWith('https://')
      ? (e.HSTS_MAX_AGE_SECONDS ?? (production ? DEFAULT_HSTS_MAX_AGE_SECONDS : 0))
      : 0,
    metrics: {
      /** When set, GET /metrics answers only `Authorization: Bearer <token>`. */
      token: e.METRICS_TOKEN,
    },
    database: { url: e.DATABASE_URL },
    redis: { url: e.REDIS_URL },
    web: {
      /** '' (the page's own origin) or an absolute http(s) URL without a trailing slash. */
      apiBaseUrl: trimSlash(e.WEB_API_BASE_URL ?? ''),
    },
  }
}

/** publicUrl, verifyBaseUrl and corsOrigins for the service listening on `host`:`port`. */
export function serviceUrls(
  host: string,
  configured: ConfiguredUrls,
  port: number,
): { publicUrl: string; verifyBaseUrl: string; corsOrigins: string[] } {
  const publicUrl = trimSlash(configured.publicUrl ?? `http://${hostInUrl(host)}:${port}`)
  const verifyBaseUrl = trimSlash(configured.verifyBaseUrl ?? publicUrl)
  const corsOrigins = configured.corsOrigins.length > 0 ? configured.corsOrigins : [new URL(verifyBaseUrl).origin]
  return { publicUrl, verifyBaseUrl, corsOrigins }
}

/** Names proxy-addr knows for address ranges, as Fastify's trustProxy takes them. */
const PROXY_RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal'])

/**
 * TRUST_PROXY as Fastify's `trustProxy` takes it: unset or "false" trusts no proxy; otherwise the proxies' addresses,
 * CIDRs or proxy-addr's range names, comma-separated. "true" trusts every hop of X-Forwarded-For, whose leftmost
 * entries the client writes itself, so every per-IP limit could be bypassed unless the proxy replaces the header:
 * refused in production. A hop count cannot tell a proxy from a client that sends enough hops (Fastify 5 refuses it).
 */
function trustProxyOf(value: string | undefined, production: boolean, problems: string[]): TrustProxy {
  const lower = value?.toLowerCase()
  if (lower === undefined || lower === 'false' || lower === 'no' || lower === '0') return false
  if (lower === 'true' || lower === 'yes') {
    if (production) problems.push(`TRUST_PROXY: "true" ${TRUST_EVERY_HOP}`)
    return true
  }
  if (/^\d+$/.test(lower)) {
    problems.push(
      "TRUST_PROXY: a hop count cannot tell a proxy from a client that sends enough hops; give the proxies' addresses",
    )
    return false
  }
  const entries = value!
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
  for (const entry of entries) {
    if (!PROXY_RANGE_NAMES.has(entry) && !isAddressOrCidr(entry)) {
      problems.push(`TRUST_PROXY: "${entry}" is not an IP address, a CIDR or a range name (loopback, …)`)
    }
  }
  return entries
}

/** Why TRUST_PROXY=true is refused in production and warned about elsewhere. */
export const TRUST_EVERY_HOP =
  "trusts every X-Forwarded-For hop, which clients can write themselves; give the load balancer's addresses or " +
  'CIDRs (e.g. 127.0.0.1 or 10.0.0.0/8)'

function isAddressOrCidr(entry: string): boolean {
  const [address, prefix, ...rest] = entry.split('/')
  const version = isIP(address ?? '')
  if (version === 0 || rest.length > 0) return false
  if (prefix === undefined) return true
  return /^\d+$/.test(prefix) && Number(prefix) <= (version === 4 ? 32 : 128)
}

/** The listen address as a URL's host: a wildcard address as the loopback one, an IPv6 address in brackets. */
export function hostInUrl(host: string): string {
  if (host === '0.0.0.0' || host === '::') return '127.0.0.1'
  return host.includes(':') ? `[${host}]` : host
}
