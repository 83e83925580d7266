// The signer CA with its key on a SoftHSM2 token (PDF_SIGNER=pkcs11): it certifies signers' keys with the token's P-256
// or RSA key under the operator's CA certificate chain, and a configuration that could not certify stops the start,
// naming the variable.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  anchoredSignatureCms,
  certificationRequest,
  checkCmsSignature,
  makeSignerKey,
  pemCertificates,
  webCryptoSigningKey,
} from '@docanchor/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certificateOf } from '../../packages/client/src/pdf/cms/der.ts'
import { ConfigError } from '../../src/config/env-fields.ts'
import { openSignerAuthority } from '../../src/pdf-signing/open-signer-authority.ts'
import { testConfig } from '../helpers/app.ts'
import { type OpensslTsa, startOpensslTsa } from '../helpers/pdf-signing/openssl-tsa.ts'
import { provisionPdfSigningKey } from '../helpers/pkcs11/pdf-signing-token.ts'
import { createSoftHsmToken, type SoftHsmToken } from '../helpers/pkcs11/softhsm.ts'

const run = promisify(execFile)
const YEAR_MS = 365 * 24 * 3600 * 1000
const CONTENT = new TextEncoder().encode('the byte range')
const events = { onAttempt: () => {}, onKeyHealth: () => {} }

let token: SoftHsmToken
let tsa: OpensslTsa

beforeAll(async () => {
  token = createSoftHsmToken('pdf-signing')
  // The token process inherits the environment the token library reads.
  Object.assign(process.env, token.env)
  tsa = await startOpensslTsa()
}, 60_000)
afterAll(async () => {
  await tsa?.close()
  token?.remove()
})

const open = (env: Record<string, string>) => openSignerAuthority(testConfig({ ...env, TSA_URL: tsa.url }), events)

describe('PDF_SIGNER=pkcs11', () => {
  it.each([
    ['P-256', {}, '1.2.840.10045.4.3.2'],
    ['RSA 2048', { rsaBits: 2048 }, '1.2.840.113549.1.1.11'],
  ])(
    'certifies signers with the token’s %s key under the operator’s chain; their signatures timestamped by the configured authority',
    async (kind, keyOptions, algorithm) => {
      const key = await provisionPdfSigningKey(token, { label: `good-${kind}`, ...keyOptions })
      const opened = await open(key.env)
      try {
        const keys = await makeSignerKey()
        const account = { email: 'ada@example.com', trust: 'email' } as const
        const certificate = await opened.authority.issue(await certificationRequest(keys, account.email), account)
        expect(certificate.signatureAlgorithm.algorithmId).toBe(algorithm)
        const signer = {
          key: webCryptoSigningKey(keys.privateKey),
          certificates: [certificate, ...opened.authority.certificates],
        }
        const digest = Buffer.from(new Uint8Array(await crypto.subtle.digest('SHA-256', CONTENT))).toString('hex')
        const cms = await anchoredSignatureCms(signer, {
          txHash: `0x${'11'.repeat(32)}`,
          digest,
          compositeHash: `0x${'22'.repeat(32)}`,
          chainId: 31337,
          contractAddress: `0x${'33'.repeat(20)}`,
        })
        const signed = await opened.authority.timestamp(await opened.authority.check(cms))
        const roots = [...pemCertificates(key.caPem), ...pemCertificates(tsa.caPem)].map(certificateOf)
        const check = await checkCmsSignature(signed.cms, CONTENT, roots)
        expect(check).toMatchObject({
          valid: true,
          trusted: true,
          signer: { subject: 'CN=ada@example.com, E=ada@example.com' },
          timestamp: { valid: true, trusted: true, authority: 'Test TSA' },
        })
        // And OpenSSL, which shares no code with the checker, agrees.
        const dir = await mkdtemp(join(tmpdir(), 'pkcs11-pdf-signer-'))
        try {
          await writeFile(join(dir, 'signature.cms'), signed.cms)
          await writeFile(join(dir, 'content.bin'), CONTENT)
          await writeFile(join(dir, 'ca.pem'), key.caPem)
          const verified = await run('openssl', [
            ...['cms', '-verify', '-binary', '-inform', 'DER', '-in', join(dir, 'signature.cms')],
            ...['-content', join(dir, 'content.bin'), '-CAfile', join(dir, 'ca.pem'), '-purpose', 'any'],
            ...['-out', '/dev/null'],
          ])
          expect(verified.stderr).toContain('CMS Verification successful')
        } finally {
          await rm(dir, { recursive: true, force: true })
        }
        expect(Math.abs(opened.notAfter.getTime() - Date.now() - 10 * YEAR_MS)).toBeLessThan(YEAR_MS)
      } finally {
        opened.close()
      }
    },
  )

  it.each([
    [
      'a certificate for another key',
      { certificateFor: 'another key' as const },
      /PDF_SIGNING_CERTIFICATES: the first certificate is not for the key "[\w-]+" \(PDF_SIGNING_KEY_LABEL\)/,
    ],
    [
      'an expired certificate',
      { validFrom: new Date(Date.now() - 2 * YEAR_MS), validForMs: YEAR_MS },
      /PDF_SIGNING_CERTIFICATES: the CA certificate expired on \d{4}-/,
    ],
    [
      'a certificate not valid yet',
      { validFrom: new Date(Date.now() + YEAR_MS) },
      /PDF_SIGNING_CERTIFICATES: the CA certificate is not valid before \d{4}-/,
    ],
  ])('refuses to start with %s, naming PDF_SIGNING_CERTIFICATES', async (_, options, message) => {
    const key = await provisionPdfSigningKey(token, {
      label: `refused-${Math.random().toString(36).slice(2, 8)}`,
      ...options,
    })
    const error = await open(key.env).then(
      (opened) => {
        opened.close()
        return undefined
      },
      (caught: unknown) => caught,
    )
    expect(error).toBeInstanceOf(ConfigError)
    expect((error as Error).message).toMatch(message)
  })

  it('refuses a label the token does not hold, and a key neither P-256 nor RSA of 2048 bits or more, naming PDF_SIGNING_KEY_LABEL', async () => {
    const key = await provisionPdfSigningKey(token, { label: 'labelled' })
    token.addKey('secp256k1-key')
    token.addKey('rsa-1024-key', 'rsa:1024')
    for (const [label, message] of [
      ['no-such-key', /PDF_SIGNING_KEY_LABEL: no key pair labelled "no-such-key" on the token/],
      ['secp256k1-key', /PDF_SIGNING_KEY_LABEL: the key "secp256k1-key" is neither a P-256 nor an RSA key/],
      ['rsa-1024-key', /PDF_SIGNING_KEY_LABEL: the RSA key "rsa-1024-key" has 1024 bits; at least 2048/],
    ] as const) {
      const error = await open({ ...key.env, PDF_SIGNING_KEY_LABEL: label }).catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ConfigError)
      expect((error as Error).message).toMatch(message)
      expect((error as Error).message).not.toContain(token.pin)
    }
  })
})
