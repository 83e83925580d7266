// The service's PDF signatures, checked by OpenSSL (an implementation that is not ours) and by the client package's
// checker: CMS SignedData with contentType, messageDigest and signingCertificateV2 and no signing-time, a signature
// timestamp token from the development TSA or from a real RFC 3161 authority (`openssl ts`), failover between
// authorities within a deadline.
import { execFile } from 'node:child_process'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { CMS_OID, checkCmsSignature } from '@docanchor/client'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certificatePem, parsePemCertificates } from '../../src/pdf-signing/certificates.ts'
import { developmentIdentity } from '../../src/pdf-signing/development-certificates.ts'
import { developmentTimestampAuthority } from '../../src/pdf-signing/development-timestamp-authority.ts'
import { httpTimestampAuthorities } from '../../src/pdf-signing/http-timestamp-authorities.ts'
import type { SigningIdentity } from '../../src/pdf-signing/issue-certificate.ts'
import { PdfSigner } from '../../src/pdf-signing/pdf-signer.ts'
import { TimestampUnavailableError } from '../../src/pdf-signing/timestamp-authority.ts'
import { type OpensslTsa, startOpensslTsa } from '../helpers/openssl-tsa.ts'

const run = promisify(execFile)
const CONTENT = new TextEncoder().encode('the byte range of a PDF, which only the client holds')

let dir: string
let identity: SigningIdentity
let tsa: OpensslTsa
const digest = async (bytes: Uint8Array) =>
  new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'pdf-signer-'))
  ;[identity, tsa] = await Promise.all([developmentIdentity(dir), startOpensslTsa()])
  await writeFile(join(dir, 'content.bin'), CONTENT)
  await writeFile(join(dir, 'dev-ca.pem'), certificatePem(identity.signing.certificates[1]!))
  await writeFile(join(dir, 'tsa-ca.pem'), tsa.caPem)
}, 60_000)

afterAll(async () => {
  await tsa?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** `openssl cms -cmsout -print` of the CMS: the structure as OpenSSL reads it. */
async function printed(cms: Uint8Array): Promise<string> {
  await writeFile(join(dir, 'print.cms'), cms)
  return (await run('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', join(dir, 'print.cms')])).stdout
}

describe('the development identity', () => {
  it('is one identity when instances on one DATA_DIR make it at the same moment', async () => {
    const shared = await mkdtemp(join(tmpdir(), 'pdf-signer-race-'))
    try {
      const made = await Promise.all(Array.from({ length: 4 }, () => developmentIdentity(shared)))
      const pems = made.map((one) => certificatePem(one.signing.certificates[0]!))
      expect(new Set(pems).size).toBe(1)
      // And the key on disk is the key of that certificate: a signature made after a restart verifies with it.
      const reloaded = await developmentIdentity(shared)
      expect(certificatePem(reloaded.signing.certificates[0]!)).toBe(pems[0])
      const signed = await new PdfSigner(reloaded.signing, developmentTimestampAuthority(reloaded.timestamping)).sign(
        await digest(CONTENT),
      )
      const roots = parsePemCertificates(certificatePem(made[0]!.signing.certificates[1]!))
      expect((await checkCmsSignature(signed.cms, CONTENT, roots)).valid).toBe(true)
      expect((await readdir(shared)).sort()).toEqual(['pdf-signing'])
    } finally {
      await rm(shared, { recursive: true, force: true })
    }
  })

  it('is made once under DATA_DIR/pdf-signing, keys 0600, and the same after a restart', async () => {
    const again = await developmentIdentity(dir)
    expect(certificatePem(again.signing.certificates[0]!)).toBe(certificatePem(identity.signing.certificates[0]!))
    for (const name of ['ca-key.pem', 'signing-key.pem', 'timestamping-key.pem']) {
      expect((await stat(join(dir, 'pdf-signing', name))).mode & 0o777).toBe(0o600)
    }
    const text = (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'pdf-signing', 'signing.pem')]))
      .stdout
    expect(text).toContain(
      'Subject: C = ZZ, O = Development only: not a trusted identity, CN = "Document Anchoring Service (development certificate, untrusted)"',
    )
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation/)
    const timestamping = (
      await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'pdf-signing', 'timestamping.pem')])
    ).stdout
    expect(timestamping).toMatch(/Extended Key Usage: critical\s+Time Stamping/)
  })
})

describe('a PDF signature’s CMS', () => {
  for (const source of ['the development TSA', 'openssl ts over HTTP'] as const) {
    it(`verifies in OpenSSL with the signing attributes PAdES asks for, timestamped by ${source}`, async () => {
      const authority =
        source === 'the development TSA'
          ? developmentTimestampAuthority(identity.timestamping)
          : httpTimestampAuthorities(
              { urls: [tsa.url], attemptTimeoutMs: 5_000, deadlineMs: 10_000, attempts: 2 },
              { onAttempt: () => {} },
            )
      const signed = await new PdfSigner(identity.signing, authority).sign(await digest(CONTENT))
      await writeFile(join(dir, 'signature.cms'), signed.cms)
      const verified = await run('openssl', [
        'cms',
        '-verify',
        '-binary',
        '-inform',
        'DER',
        '-in',
        join(dir, 'signature.cms'),
        '-content',
        join(dir, 'content.bin'),
        '-CAfile',
        join(dir, 'dev-ca.pem'),
        '-purpose',
        'any',
        '-out',
        '/dev/null',
      ])
      expect(verified.stderr).toContain('CMS Verification successful')
      const structure = await printed(signed.cms)
      const signedAttributes = structure.slice(
        structure.indexOf('signedAttrs:'),
        structure.indexOf('signatureAlgorithm:', structure.indexOf('signedAttrs:')),
      )
      expect(signedAttributes).toContain('object: contentType (1.2.840.113549.1.9.3)')
      expect(signedAttributes).toContain('object: messageDigest (1.2.840.113549.1.9.4)')
      expect(signedAttributes).toContain('object: id-smime-aa-signingCertificateV2 (1.2.840.113549.1.9.16.2.47)')
      expect(signedAttributes).not.toContain('signingTime')
      expect(structure).toContain('object: id-smime-aa-timeStampToken (1.2.840.113549.1.9.16.2.14)')
      expect(Math.abs(signed.timestampTime.getTime() - Date.now())).toBeLessThan(60_000)

      const roots = [identity.signing.certificates[1]!, ...parsePemCertificates(tsa.caPem)]
      const check = await checkCmsSignature(signed.cms, CONTENT, roots)
      expect(check).toMatchObject({ valid: true, trusted: true, signingCertificateV2: true, problems: [] })
      expect(check.timestamp).toMatchObject({ valid: true, trusted: true, authority: signed.timestampAuthority })
      expect(check.signer?.commonName).toBe('Document Anchoring Service (development certificate, untrusted)')
    })
  }

  it('is refused by the checker for other bytes, and untrusted without the service’s CA', async () => {
    const signed = await new PdfSigner(identity.signing, developmentTimestampAuthority(identity.timestamping)).sign(
      await digest(CONTENT),
    )
    const roots = [identity.signing.certificates[1]!]
    const changed = await checkCmsSignature(signed.cms, new TextEncoder().encode('other bytes'), roots)
    expect(changed).toMatchObject({ valid: false, problems: ['the document’s bytes are not what was signed'] })
    const unknownRoot = await checkCmsSignature(signed.cms, CONTENT, parsePemCertificates(tsa.caPem))
    expect(unknownRoot).toMatchObject({
      valid: true,
      trusted: false,
      trustProblem: 'it does not chain to a trusted root',
    })
    expect(unknownRoot.timestamp).toMatchObject({ valid: true, trusted: false })
  })

  it('carries a development TSA token that `openssl ts -verify` accepts', async () => {
    const token = await developmentTimestampAuthority(identity.timestamping).timestamp(CONTENT)
    await writeFile(join(dir, 'token.der'), token.der)
    const verified = await run('openssl', [
      'ts',
      '-verify',
      '-data',
      join(dir, 'content.bin'),
      '-in',
      join(dir, 'token.der'),
      '-token_in',
      '-CAfile',
      join(dir, 'dev-ca.pem'),
    ])
    expect(verified.stdout).toContain('Verification: OK')
  })
})

describe('time-stamping authorities over HTTP', () => {
  it('fails over from one that refuses and one that never answers, within the attempt timeout', async () => {
    const refusing = await startOpensslTsa('Refusing TSA')
    const silent = await startOpensslTsa('Silent TSA')
    refusing.mode = 'refuse'
    silent.mode = 'silent'
    try {
      const attempts: string[] = []
      const authorities = httpTimestampAuthorities(
        { urls: [refusing.url, silent.url, tsa.url], attemptTimeoutMs: 500, deadlineMs: 5_000, attempts: 3 },
        {
          onAttempt: (url, outcome, reason) => attempts.push(`${new URL(url).port} ${outcome} ${reason ?? ''}`.trim()),
        },
      )
      const started = performance.now()
      const token = await authorities.timestamp(CONTENT)
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(token.authority).toBe('Test TSA')
      expect(attempts).toEqual([
        `${new URL(refusing.url).port} failed HTTP 500`,
        `${new URL(silent.url).port} failed no answer within 500 ms`,
        `${new URL(tsa.url).port} ok`,
      ])
      // The one that answered is asked first next time.
      attempts.length = 0
      await authorities.timestamp(CONTENT)
      expect(attempts).toEqual([`${new URL(tsa.url).port} ok`])
    } finally {
      await Promise.all([refusing.close(), silent.close()])
    }
  })

  it('gives up within its deadline when none answers, saying which failed how', async () => {
    const silent = await startOpensslTsa('Silent TSA')
    silent.mode = 'silent'
    try {
      const authorities = httpTimestampAuthorities(
        { urls: [silent.url, 'http://127.0.0.1:1/tsa'], attemptTimeoutMs: 400, deadlineMs: 1_000, attempts: 10 },
        { onAttempt: () => {} },
      )
      const started = performance.now()
      const error = await authorities.timestamp(CONTENT).catch((e: unknown) => e)
      expect(performance.now() - started).toBeLessThan(1_500)
      expect(error).toBeInstanceOf(TimestampUnavailableError)
      expect((error as Error).message).toMatch(
        /^no time-stamping authority answered \(127\.0\.0\.1:\d+: no answer within 400 ms; 127\.0\.0\.1:1: unreachable/,
      )
    } finally {
      await silent.close()
    }
  })

  it('refuses a token over something else than what was asked', async () => {
    const reasons: (string | undefined)[] = []
    const authorities = httpTimestampAuthorities(
      { urls: [tsa.url], attemptTimeoutMs: 2_000, deadlineMs: 2_000, attempts: 1 },
      { onAttempt: (_url, _outcome, reason) => reasons.push(reason) },
    )
    const token = await authorities.timestamp(CONTENT)
    // An authority answering with a valid token made for another request (a replay, a cache on the way) is refused.
    tsa.mode = 'replay'
    try {
      await expect(authorities.timestamp(new TextEncoder().encode('other bytes'))).rejects.toBeInstanceOf(
        TimestampUnavailableError,
      )
    } finally {
      tsa.mode = 'ok'
    }
    expect(reasons.at(-1)).toMatch(/something else than this signature/)
    const check = await (await import('@docanchor/client')).checkTimestampToken(token.der, new Uint8Array([1]), [])
    expect(check.valid).toBe(false)
    expect(check.problems).toContain('the timestamp is for something else than this signature')
    expect(CMS_OID.tstInfo).toBe('1.2.840.113549.1.9.16.1.4')
  })
})
