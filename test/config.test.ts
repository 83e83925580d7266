import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { ConfigError } from '../src/config/env-fields.ts'
import { loadConfig } from '../src/config/load-config.ts'

/** What PDF_SIGNING_CERTIFICATES names: the configuration only reads it (the service checks it when it opens the key). */
const CERTIFICATES_FILE = join(mkdtempSync(join(tmpdir(), 'config-certificates-')), 'chain.pem')
writeFileSync(CERTIFICATES_FILE, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n')

const PRODUCTION_ENV = {
  NODE_ENV: 'production',
  PKCS11_MODULE: '/usr/lib/softhsm/libsofthsm2.so',
  PKCS11_TOKEN_LABEL: 'relayers',
  PKCS11_PIN: '24681357',
  PDF_SIGNING_KEY_LABEL: 'pdf-signing',
  PDF_SIGNING_CERTIFICATES: CERTIFICATES_FILE,
  TSA_URL: 'https://tsa-1.example/tsr,https://tsa-2.example/tsr',
  TSA_TRUSTED_CERTIFICATES: CERTIFICATES_FILE,
  JWT_SECRET: 'x'.repeat(32),
  DATABASE_URL: 'postgres://db.internal/anchors',
  RPC_URL: 'https://rpc-1.internal,https://rpc-2.internal',
  RELAYER_PRIVATE_KEY: `0x${'11'.repeat(32)}`,
  CONTRACT_ADDRESS: `0x${'22'.repeat(20)}`,
  SMTP_URL: 'smtp://mail.internal:587',
  PUBLIC_URL: 'https://anchors.example',
  METRICS_TOKEN: 'm'.repeat(32),
}

function errorOf(env: Record<string, string>): string {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as Error).message
  }
  throw new Error('expected loadConfig to throw')
}

describe('loadConfig', () => {
  it('gives development defaults for everything', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      production: false,
      host: '127.0.0.1',
      port: 3000,
      dataDir: './data',
      publicUrl: 'http://127.0.0.1:3000',
      verifyBaseUrl: 'http://127.0.0.1:3000',
      corsOrigins: ['http://127.0.0.1:3000'],
      database: { url: undefined },
      chain: { rpcUrls: [], relayerPrivateKeys: [], pollingIntervalMs: 20 },
      plans: { free: 100 },
      defaultPlan: 'free',
      limits: { bodyBytes: 65536, libraryBodyBytes: 16 * 1024 * 1024, verifyPerIpPerMinute: 600 },
    })
  })

  it('accepts a complete production environment', () => {
    const config = loadConfig(PRODUCTION_ENV)
    expect(config.production).toBe(true)
    expect(config.host).toBe('0.0.0.0')
    expect(config.chain.rpcUrls).toEqual(['https://rpc-1.internal', 'https://rpc-2.internal'])
    expect(config.verifyBaseUrl).toBe('https://anchors.example')
  })

  it.each([
    'JWT_SECRET',
    'DATABASE_URL',
    'RPC_URL',
    'RELAYER_PRIVATE_KEY',
    'CONTRACT_ADDRESS',
    'SMTP_URL',
    'METRICS_TOKEN',
  ])('stops a production start without %s, naming it', (name) => {
    const env: Record<string, string> = { ...PRODUCTION_ENV }
    delete env[name]
    expect(errorOf(env)).toContain(name)
  })

  it('reads every secret from <NAME>_FILE, without its final line break, and names the file when it cannot', () => {
    const dir = mkdtempSync(join(tmpdir(), 'secrets-'))
    try {
      const file = (name: string, content: string) => {
        writeFileSync(join(dir, name), content)
        return join(dir, name)
      }
      const { JWT_SECRET: _jwt, DATABASE_URL: _db, SMTP_URL: _smtp, METRICS_TOKEN: _metrics, ...rest } = PRODUCTION_ENV
      const config = loadConfig({
        ...rest,
        JWT_SECRET_FILE: file('jwt', `${'j'.repeat(40)}\n`),
        DATABASE_URL_FILE: file('db', 'postgres://anchor:pa55@db.internal/anchors\n'),
        SMTP_URL_FILE: file('smtp', 'smtp://mailer:secret@mail.internal:587'),
        METRICS_TOKEN_FILE: file('metrics', `${'t'.repeat(32)}\n`),
      })
      expect(config.jwt.secret).toBe('j'.repeat(40))
      expect(config.database.url).toBe('postgres://anchor:pa55@db.internal/anchors')
      expect(config.mail.smtpUrl).toBe('smtp://mailer:secret@mail.internal:587')
      expect(errorOf({ ...rest, JWT_SECRET_FILE: join(dir, 'missing') })).toContain('JWT_SECRET_FILE: cannot be read')
      expect(errorOf({ ...rest, JWT_SECRET_FILE: file('empty', '\n') })).toContain('JWT_SECRET_FILE: the file is empty')
      const both = errorOf({ ...PRODUCTION_ENV, JWT_SECRET_FILE: file('jwt2', 'k'.repeat(40)) })
      expect(both).toContain('JWT_SECRET: give JWT_SECRET or JWT_SECRET_FILE, not both')
      expect(both).not.toContain('k'.repeat(40))
    } finally {
      rmSync(dir, { recursive: true })
    }
  })

  it('protects /metrics with a bearer token of at least 32 characters, required in production only', () => {
    expect(loadConfig({}).metrics.token).toBeUndefined()
    expect(loadConfig(PRODUCTION_ENV).metrics.token).toBe('m'.repeat(32))
    expect(errorOf({ METRICS_TOKEN: 'short' })).toContain('METRICS_TOKEN: must be at least 32 characters')
    expect(errorOf({ METRICS_TOKEN: 'short' })).not.toContain('short"')
  })

  it('sends Strict-Transport-Security by default in production behind an https PUBLIC_URL only', () => {
    expect(loadConfig(PRODUCTION_ENV).hstsMaxAgeSeconds).toBe(31_536_000)
    expect(loadConfig({ ...PRODUCTION_ENV, HSTS_MAX_AGE_SECONDS: '0' }).hstsMaxAgeSeconds).toBe(0)
    expect(loadConfig({ ...PRODUCTION_ENV, PUBLIC_URL: 'http://anchors.internal' }).hstsMaxAgeSeconds).toBe(0)
    expect(loadConfig({}).hstsMaxAgeSeconds).toBe(0)
    expect(loadConfig({ PUBLIC_URL: 'https://a.example', HSTS_MAX_AGE_SECONDS: '600' }).hstsMaxAgeSeconds).toBe(600)
  })

  it('logs every request in development and only failed or slow ones in production, unless told otherwise', () => {
    expect(loadConfig({}).requestLog).toEqual({ mode: 'all', slowMs: 1000 })
    expect(loadConfig(PRODUCTION_ENV).requestLog).toEqual({ mode: 'failed-or-slow', slowMs: 1000 })
    expect(loadConfig({ ...PRODUCTION_ENV, REQUEST_LOG: 'all' }).requestLog.mode).toBe('all')
    expect(loadConfig({ REQUEST_LOG: 'off', REQUEST_LOG_SLOW_MS: '250' }).requestLog).toEqual({
      mode: 'off',
      slowMs: 250,
    })
    expect(() => loadConfig({ REQUEST_LOG: 'errors' })).toThrow(/REQUEST_LOG/)
    expect(() => loadConfig({ REQUEST_LOG_SLOW_MS: '0' })).toThrow(/REQUEST_LOG_SLOW_MS/)
  })

  it('takes TRUST_PROXY as the proxies\' addresses or CIDRs, and refuses "true" in production', () => {
    expect(loadConfig({}).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false)
    expect(loadConfig({ TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1,fd00::/8, loopback' }).trustProxy).toEqual([
      '127.0.0.1',
      '10.0.0.0/8',
      '::1',
      'fd00::/8',
      'loopback',
    ])
    expect(loadConfig({ ...PRODUCTION_ENV, TRUST_PROXY: '10.1.2.3' }).trustProxy).toEqual(['10.1.2.3'])
    // Development keeps "true" (with a warning at start); production refuses it, naming what to give instead.
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(true)
    expect(errorOf({ ...PRODUCTION_ENV, TRUST_PROXY: 'true' })).toContain(
      'TRUST_PROXY: "true" trusts every X-Forwarded-For hop, which clients can write themselves; give the load balancer\'s',
    )
    expect(errorOf({ TRUST_PROXY: '2' })).toContain('TRUST_PROXY: a hop count cannot tell a proxy from a client')
    expect(errorOf({ TRUST_PROXY: '10.0.0.0/33' })).toContain('TRUST_PROXY: "10.0.0.0/33" is not an IP address')
    expect(errorOf({ TRUST_PROXY: 'proxy.internal' })).toContain('"proxy.internal" is not an IP address')
  })

  it('treats PRODUCTION=true like NODE_ENV=production', () => {
    expect(errorOf({ PRODUCTION: 'true' })).toContain('JWT_SECRET: required in production')
  })

  it('refuses a JWT secret shorter than 32 bytes', () => {
    expect(errorOf({ ...PRODUCTION_ENV, JWT_SECRET: 'short' })).toContain('JWT_SECRET: must be at least 32 bytes')
    expect(errorOf({ JWT_SECRET: 'x'.repeat(31) })).toContain('JWT_SECRET')
  })

  it('names malformed values', () => {
    expect(errorOf({ PORT: 'eighty' })).toContain('PORT')
    expect(
      errorOf({ RELAYER_PRIVATE_KEY: '0x1234', RPC_URL: 'http://x', CONTRACT_ADDRESS: `0x${'22'.repeat(20)}` }),
    ).toContain('RELAYER_PRIVATE_KEY: each key must be 0x followed by 64 hex digits')
    expect(errorOf({ PLANS: 'free=100' })).toContain('PLANS')
    expect(errorOf({ DEFAULT_PLAN: 'gold' })).toContain('DEFAULT_PLAN')
    expect(errorOf({ MICROSOFT_ALLOWED_TENANTS: 'contoso.com' })).toContain(
      'MICROSOFT_ALLOWED_TENANTS: contoso.com is not a tenant id',
    )
  })

  it('requires the contract and a relayer key with an external chain', () => {
    const message = errorOf({ RPC_URL: 'http://127.0.0.1:8545' })
    expect(message).toContain('CONTRACT_ADDRESS')
    expect(message).toContain('RELAYER_PRIVATE_KEY')
  })

  describe('RELAYER_SIGNER=pkcs11', () => {
    const { RELAYER_PRIVATE_KEY: _, ...withoutKey } = PRODUCTION_ENV
    const PKCS11_ENV = { ...withoutKey, RELAYER_SIGNER: 'pkcs11', PKCS11_KEY_LABELS: 'relayer-a, relayer-b' }

    it('takes the token settings in place of a private key', () => {
      const config = loadConfig(PKCS11_ENV)
      expect(config.chain.relayerPrivateKeys).toEqual([])
      expect(config.chain.pkcs11).toEqual({
        module: '/usr/lib/softhsm/libsofthsm2.so',
        tokenLabel: 'relayers',
        pin: '24681357',
        keyLabels: ['relayer-a', 'relayer-b'],
        callTimeoutMs: 10_000,
        probeIntervalMs: 5_000,
      })
      expect(loadConfig(PRODUCTION_ENV).chain.pkcs11).toBeUndefined()
    })

    it('refuses a private key beside the token', () => {
      expect(errorOf({ ...PKCS11_ENV, RELAYER_PRIVATE_KEY: PRODUCTION_ENV.RELAYER_PRIVATE_KEY })).toContain(
        'RELAYER_PRIVATE_KEY: must be unset or empty',
      )
    })

    it.each(['PKCS11_MODULE', 'PKCS11_TOKEN_LABEL', 'PKCS11_PIN', 'PKCS11_KEY_LABELS', 'RPC_URL'])(
      'names a missing %s',
      (name) => {
        const env: Record<string, string> = { ...PKCS11_ENV }
        delete env[name]
        expect(errorOf(env)).toContain(`${name}: required`)
      },
    )

    it('reads the PIN from PKCS11_PIN_FILE, and names the file when it cannot', () => {
      const dir = mkdtempSync(join(tmpdir(), 'pin-'))
      try {
        const pinFile = join(dir, 'pin')
        writeFileSync(pinFile, '13572468\n')
        const { PKCS11_PIN: _pin, ...withoutPin } = PKCS11_ENV
        expect(loadConfig({ ...withoutPin, PKCS11_PIN_FILE: pinFile }).chain.pkcs11?.pin).toBe('13572468')
        expect(errorOf({ ...withoutPin, PKCS11_PIN_FILE: join(dir, 'missing') })).toContain(
          'PKCS11_PIN_FILE: cannot be read',
        )
        expect(errorOf({ ...PKCS11_ENV, PKCS11_PIN_FILE: pinFile })).toContain('not both')
      } finally {
        rmSync(dir, { recursive: true })
      }
    })
  })

  describe('the PDF signer', () => {
    it('takes its key from the token and its chain from a PEM file in production, and needs a TSA there', () => {
      const config = loadConfig(PRODUCTION_ENV)
      expect(config.pdfSigning.signer).toEqual({
        kind: 'pkcs11',
        token: {
          module: '/usr/lib/softhsm/libsofthsm2.so',
          tokenLabel: 'relayers',
          pin: '24681357',
          callTimeoutMs: 10_000,
          probeIntervalMs: 5_000,
        },
        keyLabel: 'pdf-signing',
        certificatesPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
      })
      expect(config.pdfSigning.timestamps).toEqual({
        urls: ['https://tsa-1.example/tsr', 'https://tsa-2.example/tsr'],
        trustedCertificatesPem: '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n',
        attemptTimeoutMs: 5_000,
        deadlineMs: 15_000,
        attempts: 4,
      })
      const { TSA_URL: _, ...withoutTsa } = PRODUCTION_ENV
      expect(errorOf(withoutTsa)).toContain('TSA_URL: required in production')
      expect(errorOf({ ...PRODUCTION_ENV, TSA_URL: 'ftp://tsa.example' })).toContain(
        'TSA_URL: "ftp://tsa.example" is not',
      )
      // A token is taken on the word of the wire only outside production.
      const { TSA_TRUSTED_CERTIFICATES: __, ...unchecked } = PRODUCTION_ENV
      expect(errorOf(unchecked)).toContain('TSA_TRUSTED_CERTIFICATES: required in production')
      expect(errorOf({ ...PRODUCTION_ENV, TSA_TRUSTED_CERTIFICATES: '/nonexistent/roots.pem' })).toContain(
        'TSA_TRUSTED_CERTIFICATES: cannot be read',
      )
    })

    it('refuses the development certificates in production, and names what a token signer lacks', () => {
      expect(errorOf({ ...PRODUCTION_ENV, PDF_SIGNER: 'development' })).toContain(
        'PDF_SIGNER: must be pkcs11 in production',
      )
      for (const name of ['PDF_SIGNING_KEY_LABEL', 'PDF_SIGNING_CERTIFICATES', 'PKCS11_PIN']) {
        const env: Record<string, string> = { ...PRODUCTION_ENV }
        delete env[name]
        expect(errorOf(env)).toContain(`${name}: required when PDF_SIGNER is pkcs11`)
      }
      expect(errorOf({ ...PRODUCTION_ENV, PDF_SIGNING_CERTIFICATES: '/no/such/chain.pem' })).toContain(
        'PDF_SIGNING_CERTIFICATES: cannot be read',
      )
    })

    it('uses the development identity and its own TSA by default outside production', () => {
      expect(loadConfig({}).pdfSigning).toEqual({
        signer: { kind: 'development' },
        timestamps: {
          urls: [],
          trustedCertificatesPem: undefined,
          attemptTimeoutMs: 5_000,
          deadlineMs: 15_000,
          attempts: 4,
        },
      })
    })
  })

  it('never echoes a secret value in its message', () => {
    const secret = 'super-secret-value'
    expect(errorOf({ ...PRODUCTION_ENV, JWT_SECRET: secret })).not.toContain(secret)
  })

  it('parses plans and lists', () => {
    const config = loadConfig({ PLANS: 'free:10, pro:5000', DEFAULT_PLAN: 'pro', CORS_ORIGINS: 'https://a, https://b' })
    expect(config.plans).toEqual({ free: 10, pro: 5000 })
    expect(config.corsOrigins).toEqual(['https://a', 'https://b'])
    const tenants = loadConfig({
      MICROSOFT_CLIENT_ID: 'id',
      MICROSOFT_CLIENT_SECRET: 'secret',
      MICROSOFT_ALLOWED_TENANTS: '72F988BF-86F1-41AF-91AB-2D7CD011DB47, 9188040d-6c67-4c5b-b112-36a304b66dad',
    })
    expect(tenants.oauth.microsoft?.allowedTenants).toEqual([
      '72f988bf-86f1-41af-91ab-2d7cd011db47',
      '9188040d-6c67-4c5b-b112-36a304b66dad',
    ])
  })
})
