// The one place that reads the environment: turns it into a typed, validated config object once, at start.
import { readFileSync } from 'node:fs'
import { isIP } from 'node:net'
import { z } from 'zod'

export class ConfigError extends Error {
  override name = 'ConfigError'
}

const HEX_PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/
const MIN_JWT_SECRET_BYTES = 32
const MIN_METRICS_TOKEN_CHARACTERS = 32
/** One year: the usual HSTS lifetime, and what browsers' preload lists ask for. */
const DEFAULT_HSTS_MAX_AGE_SECONDS = 31_536_000

const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional()

const integer = (fallback: number, min = 0) => z.coerce.number().int().min(min).default(fallback)

const booleanFlag = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
  .optional()
  .transform((value) => value === 'true' || value === '1' || value === 'yes')

/** A Microsoft directory (tenant) id, as the `tid` claim carries it. */
const TENANT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const list = z
  .string()
  .optional()
  .transform((value) =>
    (value ?? '')
      .split(',')
      .map((item) => item.trim())
      .filter((item) => item !== ''),
  )

/** `free:100,pro:5000` → { free: 100, pro: 5000 }: monthly anchor limits per plan. */
const plans = z
  .string()
  .default('free:100')
  .transform((value, ctx) => {
    const result: Record<string, number> = {}
    for (const entry of value.split(',')) {
      const match = /^\s*([a-z][a-z0-9_-]*)\s*:\s*(\d+)\s*$/.exec(entry)
      if (!match) {
        ctx.addIssue({ code: 'custom', message: `expected "plan:limit" pairs such as "free:100", got "${entry}"` })
        return z.NEVER
      }
      result[match[1]!] = Number(match[2])
    }
    return result
  })

const EnvSchema = z.object({
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

  DATABASE_URL: optionalString,
  REDIS_URL: optionalString,

  RPC_URL: list,
  CHAIN_ID: z.coerce.number().int().positive().optional(),
  CONTRACT_ADDRESS: optionalString,
  RELAYER_PRIVATE_KEY: list,
  /** Where the relayer keys live: `local` (RELAYER_PRIVATE_KEY) or `pkcs11` (a hardware token; the PKCS11_* variables). */
  RELAYER_SIGNER: z.enum(['local', 'pkcs11']).default('local'),
  PKCS11_MODULE: optionalString,
  PKCS11_TOKEN_LABEL: optionalString,
  PKCS11_PIN: optionalString,
  PKCS11_PIN_FILE: optionalString,
  PKCS11_KEY_LABELS: list,
  /** Longest wait for one token call; a key whose call takes longer leaves rotation until it answers again. */
  PKCS11_CALL_TIMEOUT_MS: integer(10_000, 100),
  PKCS11_PROBE_INTERVAL_MS: integer(5_000, 50),
  /**
   * Where the PDF signatures' key lives: `development` (a CA and certificates made under DATA_DIR, untrusted) or
   * `pkcs11` (PDF_SIGNING_KEY_LABEL on the PKCS11_* token, certified by PDF_SIGNING_CERTIFICATES). Production: pkcs11.
   */
  PDF_SIGNER: z.enum(['development', 'pkcs11']).optional(),
  PDF_SIGNING_KEY_LABEL: optionalString,
  /** A PEM file: the signing certificate first, then its chain up to the root. */
  PDF_SIGNING_CERTIFICATES: optionalString,
  /** RFC 3161 time-stamping authorities, asked in turn; without any, the development TSA (not in production). */
  TSA_URL: list,
  TSA_ATTEMPT_TIMEOUT_MS: integer(5_000, 100),
  TSA_DEADLINE_MS: integer(15_000, 100),
  TSA_ATTEMPTS: integer(4, 1),
  /**
   * A PEM file of the roots the TSA_URL authorities' certificates chain to: a token that does not chain to one of them
   * is refused. Required in production, where it is also what verifiers are told to trust for timestamps.
   */
  TSA_TRUSTED_CERTIFICATES: optionalString,
  PUBLIC_RPC_URL: optionalString,
  /**
   * The embedded chain's loopback port (no RPC_URL): stable across starts for tools that talk to it directly; by
   * default the one after PORT (a free one when PORT is 0). Never published: `/api/info` names the read-only /rpc.
   */
  EMBEDDED_CHAIN_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  EXPLORER_TX_URL: optionalString,
  /** The API the verification page calls; empty: the origin that serves the page. */
  WEB_API_BASE_URL: optionalString,
  CHAIN_POLLING_INTERVAL_MS: z.coerce.number().int().positive().optional(),

  JWT_SECRET: optionalString,
  JWT_ISSUER: z.string().default('document-anchoring-service'),
  JWT_AUDIENCE: z.string().default('document-anchoring-app'),

  SMTP_URL: optionalString,
  MAIL_FROM: z.string().default('Document Anchoring <no-reply@localhost>'),

  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,
  GOOGLE_ISSUER: z.string().url().default('https://accounts.google.com'),
  MICROSOFT_CLIENT_ID: optionalString,
  MICROSOFT_CLIENT_SECRET: optionalString,
  MICROSOFT_ISSUER: z.string().url().default('https://login.microsoftonline.com/common/v2.0'),
  MICROSOFT_ALLOWED_TENANTS: list,
  /** Lets OAuth talk to http:// issuers (a local test provider); refused in production. */
  OAUTH_ALLOW_INSECURE_REQUESTS: booleanFlag,
  OAUTH_FLOW_TTL_SECONDS: integer(600, 30),
  OAUTH_STARTS_PER_IP_PER_HOUR: integer(60, 1),
  AUTH_EXCHANGE_CODE_TTL_SECONDS: integer(60, 5),
  SIGN_IN_CODE_TTL_SECONDS: integer(600, 60),
  SIGN_IN_CODE_MAX_ATTEMPTS: integer(5, 1),

  PLANS: plans,
  DEFAULT_PLAN: z.string().default('free'),
  BODY_LIMIT_BYTES: integer(64 * 1024, 1024),
  LIBRARY_BODY_LIMIT_BYTES: integer(16 * 1024 * 1024, 1024),
  /**
   * The longest a client may take to send a whole request, headers and body: a request trickled in a byte at a time
   * would otherwise hold its connection for as long as the client likes. 16 MiB of library in 60 s is 2.3 Mbit/s.
   */
  REQUEST_TIMEOUT_MS: integer(60_000, 1_000),
  LIBRARY_MAX_SIGNATURES: integer(500, 1),
  LIBRARY_MAX_SNIPPETS: integer(2_000, 1),
  LIBRARY_MAX_TOMBSTONES: integer(10_000, 1),
  /** Library syncs per account a minute: each may carry 16 MiB to read and validate. */
  LIBRARY_SYNCS_PER_USER_PER_MINUTE: integer(30, 1),
  LIBRARY_MAX_PNG_BYTES: integer(256 * 1024, 64),
  LIBRARY_CLOCK_SKEW_MS: integer(5 * 60_000),
  CODE_SENDS_PER_EMAIL_PER_HOUR: integer(5, 1),
  CODE_REQUESTS_PER_IP_PER_HOUR: integer(60, 1),
  CODE_VERIFICATIONS_PER_IP_PER_HOUR: integer(120, 1),
  RELAY_PER_USER_PER_MINUTE: integer(60, 1),
  /** How long POST /api/relay waits for the receipt before answering 202 pending. */
  RELAY_WAIT_MS: integer(15_000),
  RELAY_CONFIRMATIONS: integer(1, 1),
  /** Period of the background relay monitor; 0 turns it off (tests that drive it by hand). */
  RELAY_MONITOR_INTERVAL_MS: z.coerce.number().int().min(0).optional(),
  /** A transaction without a receipt for this long is replaced with a higher fee. */
  RELAY_STUCK_AFTER_MS: z.coerce.number().int().min(1).optional(),
  RELAY_FEE_BUMP_PERCENT: integer(12, 10),
  RELAY_MAX_FEE_PER_GAS_GWEI: z.coerce.number().positive().default(500),
  RELAY_GAS_LIMIT: integer(40_000, 21_000),
  RELAY_MIN_BALANCE_ETH: z.coerce.number().min(0).default(0.01),
  RELAY_FEE_CACHE_MS: integer(3_000),
  RELAY_REORG_WATCH_BLOCKS: integer(64, 1),
  /** Where a reconciliation with the chain starts when the database knows no mined anchor (the contract's block). */
  RELAY_RECONCILE_FROM_BLOCK: integer(0),
  /** Blocks per eth_getLogs call of a reconciliation: providers cap the range (2,000 is under the common caps). */
  RELAY_RECONCILE_LOG_BLOCKS: integer(2_000, 1),
  VERIFY_PER_IP_PER_MINUTE: integer(600, 1),
  /** 0 turns the verify result cache off (every request walks the chain). */
  VERIFY_CACHE_TTL_SECONDS: integer(60, 0),
  VERIFY_NOT_FOUND_TTL_SECONDS: integer(5, 0),
  /** How long an expired verify result may still be served while the chain is unreachable. */
  VERIFY_STALE_IF_ERROR_SECONDS: integer(3600, 0),
  VERIFY_MAX_DEPTH: integer(256, 1),
  VERIFY_MAX_SUCCESSORS: integer(100, 0),
  /** Blocks after which a receipt is taken as final and kept in memory for good. */
  VERIFY_FINALITY_DEPTH: integer(64, 0),
  VERIFY_CACHE_MAX_ENTRIES: integer(10_000, 1),
  VERIFY_RECEIPT_CACHE_MAX_ENTRIES: integer(50_000, 1),
  /** Transaction hashes the in-memory index of verified chains' links holds (a link one, a listed successor one). */
  VERIFY_LINK_CACHE_MAX_HASHES: integer(100_000, 1),
  VERIFY_REDIS_KEY_PREFIX: z.string().default('anchor:verify:'),
  SHUTDOWN_TIMEOUT_MS: integer(10_000, 100),
})

export type Env = Record<string, string | undefined>

export interface Config {
  production: boolean
  host: string
  port: number
  dataDir: string
  /** The service's own public URL; the default base of QR URLs. */
  publicUrl: string
  verifyBaseUrl: string
  appScheme: string
  corsOrigins: string[]
  /**
   * publicUrl, verifyBaseUrl and corsOrigins for the port actually bound: those not configured default to the
   * service's own address, which for PORT=0 is known only once a free port is picked (service.ts).
   */
  urlsForPort(port: number): Pick<Config, 'publicUrl' | 'verifyBaseUrl' | 'corsOrigins'>
  logLevel: z.infer<typeof EnvSchema>['LOG_LEVEL']
  /**
   * The service's per-request log lines (src/api/request-log-policy.ts). `all`: Fastify's two lines for every request (the
   * development default). `failed-or-slow`: one line for a request answered 5xx, ended by an error, or slower than
   * `slowMs`, with what the two lines carried (the production default: the load balancer writes the access log line of
   * every request, so the instances log only what needs their view). `off`: none (errors are still logged).
   */
  requestLog: { mode: NonNullable<z.infer<typeof EnvSchema>['REQUEST_LOG']>; slowMs: number }
  /**
   * Which X-Forwarded-For hops are the service's own proxies, as Fastify's `trustProxy` takes it: false (none: the
   * socket's peer is the client), or their addresses or CIDRs. `true` trusts every hop, which a client can write
   * itself: refused in production, warned about at start otherwise.
   */
  trustProxy: TrustProxy
  shutdownTimeoutMs: number
  /** Seconds of the Strict-Transport-Security header; 0: none (never sent unless PUBLIC_URL is https). */
  hstsMaxAgeSeconds: number
  metrics: {
    /** When set, GET /metrics answers only `Authorization: Bearer <token>`. */
    token: string | undefined
  }
  database: { url: string | undefined }
  redis: { url: string | undefined }
  chain: {
    /** Empty: start the embedded anvil chain under `dataDir`. */
    rpcUrls: string[]
    chainId: number | undefined
    contractAddress: `0x${string}` | undefined
    relayerPrivateKeys: `0x${string}`[]
    /** Set when RELAYER_SIGNER is pkcs11: the relayer keys are on this token and relayerPrivateKeys is empty. */
    pkcs11: Pkcs11Config | undefined
    publicRpcUrl: string | undefined
    /** The embedded anvil's port; 0, a free one. */
    embeddedPort: number
    explorerTxUrl: string | undefined
    pollingIntervalMs: number
  }
  pdfSigning: { signer: PdfSignerConfig; timestamps: TimestampConfig }
  jwt: { secret: string | undefined; issuer: string; audience: string }
  mail: { smtpUrl: string | undefined; from: string }
  oauth: {
    google: OAuthProviderConfig | undefined
    microsoft: OAuthProviderConfig | undefined
    /** Test-only: allow http:// issuers. Never true in production. */
    allowInsecureRequests: boolean
  }
  signIn: {
    codeTtlSeconds: number
    codeMaxAttempts: number
    oauthFlowTtlSeconds: number
    exchangeCodeTtlSeconds: number
    oauthStartsPerIpPerHour: number
  }
  plans: Record<string, number>
  defaultPlan: string
  limits: {
    bodyBytes: number
    libraryBodyBytes: number
    requestTimeoutMs: number
    codeSendsPerEmailPerHour: number
    codeRequestsPerIpPerHour: number
    codeVerificationsPerIpPerHour: number
    relayPerUserPerMinute: number
    verifyPerIpPerMinute: number
  }
  relay: RelaySettings
  verify: {
    cacheTtlSeconds: number
    notFoundTtlSeconds: number
    staleIfErrorSeconds: number
    maxDepth: number
    maxSuccessors: number
    finalityDepth: number
    cacheMaxEntries: number
    receiptCacheMaxEntries: number
    linkCacheMaxHashes: number
    /** Prefix of every Redis key the verify cache and its rate limit write. */
    redisKeyPrefix: string
  }
  library: LibraryLimits
  web: {
    /** '' (the page's own origin) or an absolute http(s) URL without a trailing slash. */
    apiBaseUrl: string
  }
}

export type TrustProxy = boolean | string[]

/** A PKCS#11 token: its library, label and PIN, and how long its calls may take. */
export interface TokenConfig {
  module: string
  tokenLabel: string
  pin: string
  callTimeoutMs: number
  probeIntervalMs: number
}

/** The relayer keys on the token. */
export interface Pkcs11Config extends TokenConfig {
  keyLabels: string[]
}

/** The key and certificates the service's PDF signatures are made with. */
export type PdfSignerConfig =
  | { kind: 'development' }
  | { kind: 'pkcs11'; token: TokenConfig; keyLabel: string; certificatesPem: string }

export interface TimestampConfig {
  /** Empty: the development TSA (never in production). */
  urls: string[]
  /** PEM: the roots the authorities' tokens must chain to; undefined only outside production. */
  trustedCertificatesPem: string | undefined
  attemptTimeoutMs: number
  deadlineMs: number
  attempts: number
}

export interface LibraryLimits {
  /** Live signatures per user. */
  maxSignatures: number
  /** Live snippets per user. */
  maxSnippets: number
  /** Deletion markers kept per user and kind; the oldest beyond this are forgotten. Also caps a sync's delete list. */
  maxTombstones: number
  /** Syncs per account a minute. */
  syncsPerUserPerMinute: number
  /** Decoded size of one signature PNG. */
  maxPngBytes: number
  /** How far past the server's clock a client timestamp may lie before the sync is rejected. */
  clockSkewMs: number
}

export interface RelaySettings {
  waitMs: number
  /** Blocks a receipt must be deep before its anchor counts as confirmed. */
  confirmations: number
  /** 0: no background monitor. */
  monitorIntervalMs: number
  stuckAfterMs: number
  feeBumpPercent: number
  /** Wei; no transaction is ever signed above it. */
  maxFeePerGas: bigint
  gasLimit: bigint
  /** Wei; a relayer below it takes no new work. */
  minBalance: bigint
  feeCacheMs: number
  /** Confirmed anchors this many blocks deep or less are re-checked for reorgs. */
  reorgWatchBlocks: number
  reconcile: {
    /** The first block scanned when the database knows no mined anchor of the relayer keys. */
    fromBlock: number
    /** Blocks per eth_getLogs call. */
    logBlocks: number
  }
}

export interface OAuthProviderConfig {
  issuer: string
  clientId: string
  clientSecret: string
  /** With a multi-tenant issuer: the only tenants (`tid`, lower case) whose users may sign in; empty admits any. */
  allowedTenants: string[]
}

/** The process's own environment: with `rotationDatabaseUrl`, the only reads of `process.env` in the codebase. */
export function loadConfigFromProcess(): Config {
  return loadConfig(process.env)
}

/**
 * The service's PostgreSQL, for the owner's relayer rotation commands (`deploy drain`, `deploy revoke`): the same
 * DATABASE_URL the service instances share. Undefined when unset or empty.
 */
export function rotationDatabaseUrl(): string | undefined {
  return process.env.DATABASE_URL || undefined
}

/** Parses the environment; throws ConfigError naming every bad or missing variable. */
export function loadConfig(env: Env): Config {
  const parsed = EnvSchema.safeParse(env)
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`)
    throw new ConfigError(`Invalid configuration:\n  ${lines.join('\n  ')}`)
  }
  const e = parsed.data
  const production = e.PRODUCTION || e.NODE_ENV === 'production'
  const problems: string[] = []

  for (const key of e.RELAYER_PRIVATE_KEY) {
    if (!HEX_PRIVATE_KEY.test(key)) problems.push('RELAYER_PRIVATE_KEY: each key must be 0x followed by 64 hex digits')
  }
  if (e.CONTRACT_ADDRESS !== undefined && !ADDRESS.test(e.CONTRACT_ADDRESS)) {
    problems.push('CONTRACT_ADDRESS: must be 0x followed by 40 hex digits')
  }
  if (e.JWT_SECRET !== undefined && Buffer.byteLength(e.JWT_SECRET) < MIN_JWT_SECRET_BYTES) {
    problems.push(`JWT_SECRET: must be at least ${MIN_JWT_SECRET_BYTES} bytes`)
  }
  if (e.METRICS_TOKEN !== undefined && e.METRICS_TOKEN.length < MIN_METRICS_TOKEN_CHARACTERS) {
    problems.push(`METRICS_TOKEN: must be at least ${MIN_METRICS_TOKEN_CHARACTERS} characters`)
  }
  if (e.RPC_URL.length > 0 && e.CONTRACT_ADDRESS === undefined) {
    problems.push('CONTRACT_ADDRESS: required when RPC_URL is set (deploy with `npm run deploy`)')
  }
  const localKeys = e.RELAYER_SIGNER === 'local'
  if (localKeys && e.RPC_URL.length > 0 && e.RELAYER_PRIVATE_KEY.length === 0) {
    problems.push('RELAYER_PRIVATE_KEY: required when RPC_URL is set')
  }
  const pkcs11 = localKeys ? undefined : pkcs11Config(e, problems)
  const pdfSigner = pdfSignerConfig(e, production, problems)
  for (const url of e.TSA_URL) {
    if (!/^https?:\/\/\S+$/i.test(url)) problems.push(`TSA_URL: ${JSON.stringify(url)} is not an http(s) URL`)
  }
  if (production && e.TSA_URL.length === 0) {
    problems.push('TSA_URL: required in production (the development TSA is not a trusted time source)')
  }
  const tsaTrustedPem = tsaTrustedCertificates(e, production, problems)
  const trustProxy = trustProxyOf(e.TRUST_PROXY, production, problems)
  if (e.WEB_API_BASE_URL !== undefined && !/^https?:\/\/[^\s?#]+$/i.test(e.WEB_API_BASE_URL)) {
    problems.push('WEB_API_BASE_URL: must be an absolute http(s) URL without query or fragment')
  }
  if (!(e.DEFAULT_PLAN in e.PLANS)) problems.push(`DEFAULT_PLAN: "${e.DEFAULT_PLAN}" is not one of PLANS`)
  if (production) {
    // Production never falls back to embedded state: every one of these must be given explicitly.
    const required: [string, unknown][] = [
      ['JWT_SECRET', e.JWT_SECRET],
      ['DATABASE_URL', e.DATABASE_URL],
      ['RPC_URL', e.RPC_URL.length > 0 ? e.RPC_URL : undefined],
      ['RELAYER_PRIVATE_KEY', !localKeys || e.RELAYER_PRIVATE_KEY.length > 0 ? true : undefined],
      ['CONTRACT_ADDRESS', e.CONTRACT_ADDRESS],
      ['SMTP_URL', e.SMTP_URL],
      ['PUBLIC_URL', e.PUBLIC_URL],
      ['METRICS_TOKEN', e.METRICS_TOKEN],
    ]
    for (const [name, value] of required) {
      if (value === undefined) problems.push(`${name}: required in production`)
    }
    if (e.OAUTH_ALLOW_INSECURE_REQUESTS) problems.push('OAUTH_ALLOW_INSECURE_REQUESTS: not allowed in production')
  }
  const oauthGoogle = oauthProvider('GOOGLE', e.GOOGLE_ISSUER, e.GOOGLE_CLIENT_ID, e.GOOGLE_CLIENT_SECRET, problems)
  const oauthMicrosoft = oauthProvider(
    'MICROSOFT',
    e.MICROSOFT_ISSUER,
    e.MICROSOFT_CLIENT_ID,
    e.MICROSOFT_CLIENT_SECRET,
    problems,
    e.MICROSOFT_ALLOWED_TENANTS,
  )
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)

  const host = e.HOST ?? (production ? '0.0.0.0' : '127.0.0.1')
  const urlsForPort = (port: number) => {
    const publicUrl = trimSlash(e.PUBLIC_URL ?? `http://${hostInUrl(host)}:${port}`)
    const verifyBaseUrl = trimSlash(e.VERIFY_BASE_URL ?? publicUrl)
    const corsOrigins = e.CORS_ORIGINS.length > 0 ? e.CORS_ORIGINS : [new URL(verifyBaseUrl).origin]
    return { publicUrl, verifyBaseUrl, corsOrigins }
  }
  const { publicUrl, verifyBaseUrl, corsOrigins } = urlsForPort(e.PORT)
  return {
    production,
    host,
    port: e.PORT,
    dataDir: e.DATA_DIR,
    publicUrl,
    verifyBaseUrl,
    appScheme: e.APP_SCHEME,
    corsOrigins,
    urlsForPort,
    logLevel: e.LOG_LEVEL,
    requestLog: { mode: e.REQUEST_LOG ?? (production ? 'failed-or-slow' : 'all'), slowMs: e.REQUEST_LOG_SLOW_MS },
    trustProxy,
    shutdownTimeoutMs: e.SHUTDOWN_TIMEOUT_MS,
    hstsMaxAgeSeconds: publicUrl.startsWith('https://')
      ? (e.HSTS_MAX_AGE_SECONDS ?? (production ? DEFAULT_HSTS_MAX_AGE_SECONDS : 0))
      : 0,
    metrics: { token: e.METRICS_TOKEN },
    database: { url: e.DATABASE_URL },
    redis: { url: e.REDIS_URL },
    chain: {
      rpcUrls: e.RPC_URL,
      chainId: e.CHAIN_ID,
      contractAddress: e.CONTRACT_ADDRESS as `0x${string}` | undefined,
      relayerPrivateKeys: e.RELAYER_PRIVATE_KEY as `0x${string}`[],
      pkcs11,
      publicRpcUrl: e.PUBLIC_RPC_URL,
      embeddedPort: e.EMBEDDED_CHAIN_PORT ?? (e.PORT === 0 || e.PORT === 65_535 ? 0 : e.PORT + 1),
      explorerTxUrl: e.EXPLORER_TX_URL,
      // A local chain answers in milliseconds; a public one mines every few seconds.
      pollingIntervalMs: e.CHAIN_POLLING_INTERVAL_MS ?? (e.RPC_URL.length === 0 ? 20 : 1000),
    },
    pdfSigning: {
      signer: pdfSigner ?? { kind: 'development' },
      timestamps: {
        urls: e.TSA_URL,
        trustedCertificatesPem: tsaTrustedPem,
        attemptTimeoutMs: e.TSA_ATTEMPT_TIMEOUT_MS,
        deadlineMs: e.TSA_DEADLINE_MS,
        attempts: e.TSA_ATTEMPTS,
      },
    },
    jwt: { secret: e.JWT_SECRET, issuer: e.JWT_ISSUER, audience: e.JWT_AUDIENCE },
    mail: { smtpUrl: e.SMTP_URL, from: e.MAIL_FROM },
    oauth: { google: oauthGoogle, microsoft: oauthMicrosoft, allowInsecureRequests: e.OAUTH_ALLOW_INSECURE_REQUESTS },
    signIn: {
      codeTtlSeconds: e.SIGN_IN_CODE_TTL_SECONDS,
      codeMaxAttempts: e.SIGN_IN_CODE_MAX_ATTEMPTS,
      oauthFlowTtlSeconds: e.OAUTH_FLOW_TTL_SECONDS,
      exchangeCodeTtlSeconds: e.AUTH_EXCHANGE_CODE_TTL_SECONDS,
      oauthStartsPerIpPerHour: e.OAUTH_STARTS_PER_IP_PER_HOUR,
    },
    plans: e.PLANS,
    defaultPlan: e.DEFAULT_PLAN,
    limits: {
      bodyBytes: e.BODY_LIMIT_BYTES,
      libraryBodyBytes: e.LIBRARY_BODY_LIMIT_BYTES,
      requestTimeoutMs: e.REQUEST_TIMEOUT_MS,
      codeSendsPerEmailPerHour: e.CODE_SENDS_PER_EMAIL_PER_HOUR,
      codeRequestsPerIpPerHour: e.CODE_REQUESTS_PER_IP_PER_HOUR,
      codeVerificationsPerIpPerHour: e.CODE_VERIFICATIONS_PER_IP_PER_HOUR,
      relayPerUserPerMinute: e.RELAY_PER_USER_PER_MINUTE,
      verifyPerIpPerMinute: e.VERIFY_PER_IP_PER_MINUTE,
    },
    relay: {
      waitMs: e.RELAY_WAIT_MS,
      confirmations: e.RELAY_CONFIRMATIONS,
      // A local chain mines in milliseconds, so a transaction waiting seconds there is stuck; a public one is not.
      monitorIntervalMs: e.RELAY_MONITOR_INTERVAL_MS ?? (e.RPC_URL.length === 0 ? 500 : 5_000),
      stuckAfterMs: e.RELAY_STUCK_AFTER_MS ?? (e.RPC_URL.length === 0 ? 3_000 : 90_000),
      feeBumpPercent: e.RELAY_FEE_BUMP_PERCENT,
      maxFeePerGas: BigInt(Math.round(e.RELAY_MAX_FEE_PER_GAS_GWEI * 1e9)),
      gasLimit: BigInt(e.RELAY_GAS_LIMIT),
      minBalance: BigInt(Math.round(e.RELAY_MIN_BALANCE_ETH * 1e9)) * 1_000_000_000n,
      feeCacheMs: e.RELAY_FEE_CACHE_MS,
      reorgWatchBlocks: e.RELAY_REORG_WATCH_BLOCKS,
      reconcile: { fromBlock: e.RELAY_RECONCILE_FROM_BLOCK, logBlocks: e.RELAY_RECONCILE_LOG_BLOCKS },
    },
    verify: {
      cacheTtlSeconds: e.VERIFY_CACHE_TTL_SECONDS,
      notFoundTtlSeconds: e.VERIFY_NOT_FOUND_TTL_SECONDS,
      staleIfErrorSeconds: e.VERIFY_STALE_IF_ERROR_SECONDS,
      maxDepth: e.VERIFY_MAX_DEPTH,
      maxSuccessors: e.VERIFY_MAX_SUCCESSORS,
      finalityDepth: e.VERIFY_FINALITY_DEPTH,
      cacheMaxEntries: e.VERIFY_CACHE_MAX_ENTRIES,
      receiptCacheMaxEntries: e.VERIFY_RECEIPT_CACHE_MAX_ENTRIES,
      linkCacheMaxHashes: e.VERIFY_LINK_CACHE_MAX_HASHES,
      redisKeyPrefix: e.VERIFY_REDIS_KEY_PREFIX,
    },
    library: {
      maxSignatures: e.LIBRARY_MAX_SIGNATURES,
      maxSnippets: e.LIBRARY_MAX_SNIPPETS,
      maxTombstones: e.LIBRARY_MAX_TOMBSTONES,
      syncsPerUserPerMinute: e.LIBRARY_SYNCS_PER_USER_PER_MINUTE,
      maxPngBytes: e.LIBRARY_MAX_PNG_BYTES,
      clockSkewMs: e.LIBRARY_CLOCK_SKEW_MS,
    },
    web: { apiBaseUrl: trimSlash(e.WEB_API_BASE_URL ?? '') },
  }
}

function oauthProvider(
  prefix: string,
  issuer: string,
  clientId: string | undefined,
  clientSecret: string | undefined,
  problems: string[],
  allowedTenants: string[] = [],
): OAuthProviderConfig | undefined {
  for (const tenant of allowedTenants) {
    if (!TENANT_ID.test(tenant)) problems.push(`${prefix}_ALLOWED_TENANTS: ${tenant} is not a tenant id (a GUID)`)
  }
  if (clientId === undefined && clientSecret === undefined) return undefined
  if (clientId === undefined || clientSecret === undefined) {
    problems.push(`${prefix}_CLIENT_ID and ${prefix}_CLIENT_SECRET: set both or neither`)
    return undefined
  }
  return { issuer, clientId, clientSecret, allowedTenants: allowedTenants.map((tenant) => tenant.toLowerCase()) }
}

/** The relayer keys' token; each problem names its variable, and none quotes the PIN. */
function pkcs11Config(e: z.infer<typeof EnvSchema>, problems: string[]): Pkcs11Config | undefined {
  const before = problems.length
  if (e.RELAYER_PRIVATE_KEY.length > 0) {
    problems.push(
      'RELAYER_PRIVATE_KEY: must be unset or empty when RELAYER_SIGNER is pkcs11 (the keys are on the token)',
    )
  }
  if (e.RPC_URL.length === 0) {
    problems.push('RPC_URL: required when RELAYER_SIGNER is pkcs11 (the embedded chain funds only its own keys)')
  }
  if (e.PKCS11_KEY_LABELS.length === 0) problems.push('PKCS11_KEY_LABELS: required when RELAYER_SIGNER is pkcs11')
  if (new Set(e.PKCS11_KEY_LABELS).size !== e.PKCS11_KEY_LABELS.length) {
    problems.push('PKCS11_KEY_LABELS: a label is listed twice')
  }
  const token = tokenConfig(e, 'RELAYER_SIGNER', problems)
  if (problems.length > before || !token) return undefined
  return { ...token, keyLabels: e.PKCS11_KEY_LABELS }
}

/** The PDF signatures' key: the development identity, or a key on the token with its certificate chain. */
function pdfSignerConfig(
  e: z.infer<typeof EnvSchema>,
  production: boolean,
  problems: string[],
): PdfSignerConfig | undefined {
  const kind = e.PDF_SIGNER ?? (production ? 'pkcs11' : 'development')
  if (kind === 'development') {
    if (production)
      problems.push('PDF_SIGNER: must be pkcs11 in production (the development certificates are untrusted)')
    return { kind }
  }
  const before = problems.length
  if (e.PDF_SIGNING_KEY_LABEL === undefined) problems.push('PDF_SIGNING_KEY_LABEL: required when PDF_SIGNER is pkcs11')
  let certificatesPem: string | undefined
  if (e.PDF_SIGNING_CERTIFICATES === undefined) {
    problems.push(
      'PDF_SIGNING_CERTIFICATES: required when PDF_SIGNER is pkcs11 (a PEM file, the signing certificate first)',
    )
  } else {
    try {
      certificatesPem = readFileSync(e.PDF_SIGNING_CERTIFICATES, 'utf8')
    } catch {
      problems.push('PDF_SIGNING_CERTIFICATES: cannot be read')
    }
  }
  const token = tokenConfig(e, 'PDF_SIGNER', problems)
  if (problems.length > before || !token) return undefined
  return { kind, token, keyLabel: e.PDF_SIGNING_KEY_LABEL!, certificatesPem: certificatesPem! }
}

/**
 * The roots a TSA's tokens must chain to. Production takes no token on the word of the wire: a plain-HTTP authority
 * (or a proxy in between) could otherwise put any time it likes into every signature.
 */
function tsaTrustedCertificates(
  e: z.infer<typeof EnvSchema>,
  production: boolean,
  problems: string[],
): string | undefined {
  if (e.TSA_TRUSTED_CERTIFICATES === undefined) {
    if (production && e.TSA_URL.length > 0) {
      problems.push(
        'TSA_TRUSTED_CERTIFICATES: required in production (a PEM file of the roots the TSA_URL authorities chain to)',
      )
    }
    return undefined
  }
  if (e.TSA_URL.length === 0) {
    problems.push('TSA_TRUSTED_CERTIFICATES: given without TSA_URL (the development TSA is trusted by construction)')
    return undefined
  }
  try {
    return readFileSync(e.TSA_TRUSTED_CERTIFICATES, 'utf8')
  } catch {
    problems.push('TSA_TRUSTED_CERTIFICATES: cannot be read')
    return undefined
  }
}

/** The token's library, label and PIN, for `user` (the variable that chose pkcs11); none of its problems quotes the PIN. */
function tokenConfig(e: z.infer<typeof EnvSchema>, user: string, problems: string[]): TokenConfig | undefined {
  const before = problems.length
  for (const [name, value] of [
    ['PKCS11_MODULE', e.PKCS11_MODULE],
    ['PKCS11_TOKEN_LABEL', e.PKCS11_TOKEN_LABEL],
  ] as const) {
    if (value === undefined) problems.push(`${name}: required when ${user} is pkcs11`)
  }
  let pin = e.PKCS11_PIN
  if (pin !== undefined && e.PKCS11_PIN_FILE !== undefined) {
    problems.push('PKCS11_PIN: give PKCS11_PIN or PKCS11_PIN_FILE, not both')
  } else if (e.PKCS11_PIN_FILE !== undefined) {
    try {
      pin = readFileSync(e.PKCS11_PIN_FILE, 'utf8').trim()
    } catch {
      problems.push('PKCS11_PIN_FILE: cannot be read')
    }
    if (pin === '') problems.push('PKCS11_PIN_FILE: the file is empty')
  } else if (pin === undefined) {
    problems.push(`PKCS11_PIN: required when ${user} is pkcs11 (or PKCS11_PIN_FILE)`)
  }
  if (problems.length > before) return undefined
  return {
    module: e.PKCS11_MODULE!,
    tokenLabel: e.PKCS11_TOKEN_LABEL!,
    pin: pin!,
    callTimeoutMs: e.PKCS11_CALL_TIMEOUT_MS,
    probeIntervalMs: e.PKCS11_PROBE_INTERVAL_MS,
  }
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '')
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
