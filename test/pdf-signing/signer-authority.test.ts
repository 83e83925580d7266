// The service as its signers' CA, checked by OpenSSL (an implementation that is not ours) and by the client
// package's checker: a signer certificate for the key of a PKCS#10 request, naming the account's e-mail and nothing
// else; the signer's CMS (contentType, messageDigest, signingCertificateV2, the anchor, no signing-time) checked
// before it is timestamped, by the development TSA or a real RFC 3161 authority (`openssl ts`); failover between
// authorities within a deadline.
import { execFile } from 'node:child_process'
import { createHash } from 'node:crypto'
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import {
  anchoredSignatureCms,
  CMS_OID,
  type CmsSigner,
  certificateDer,
  certificationRequest,
  checkCmsSignature,
  makeSignerKey,
  webCryptoSigningKey,
} from '@docanchor/client'
import { fromBER } from 'asn1js'
import { ContentInfo, SignedData, TSTInfo } from 'pkijs'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { certificatePem, parsePemCertificates } from '../../src/pdf-signing/certificates.ts'
import { developmentIdentity } from '../../src/pdf-signing/development-certificates.ts'
import { developmentTimestampAuthority } from '../../src/pdf-signing/development-timestamp-authority.ts'
import { CertificateRequestError, TimestampUnavailableError } from '../../src/pdf-signing/errors.ts'
import { httpTimestampAuthorities } from '../../src/pdf-signing/http-timestamp-authorities.ts'
import { identityOf, makeIdentity, type SigningIdentity } from '../../src/pdf-signing/issue-certificate.ts'
import { SignerAuthority } from '../../src/pdf-signing/signer-authority.ts'
import { statusUrlsOf } from '../../src/pdf-signing/signer-certificate.ts'
import { type OpensslTsa, startOpensslTsa } from '../helpers/pdf-signing/openssl-tsa.ts'

const run = promisify(execFile)
const CONTENT = new TextEncoder().encode('the byte range of a PDF, which only the client holds')
/** What a time-stamping authority is asked to timestamp: the SHA-256 of CONTENT. */
const IMPRINT = new Uint8Array(createHash('sha256').update(CONTENT).digest())
const ADA = { email: 'ada@example.com', trust: 'google' } as const
const TEST_STATUS_URLS = statusUrlsOf('https://anchors.example')

let dir: string
let identity: SigningIdentity
let tsa: OpensslTsa
const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex')
/** The openssl TSA's CA: what TSA_TRUSTED_CERTIFICATES would hold. */
const tsaRoots = () => parsePemCertificates(tsa.caPem)
const digest = async (bytes: Uint8Array) =>
  hex(new Uint8Array(await crypto.subtle.digest('SHA-256', bytes as Uint8Array<ArrayBuffer>)))
const request = async (bytes = CONTENT) => ({
  txHash: `0x${'11'.repeat(32)}`,
  digest: await digest(bytes),
  compositeHash: `0x${'22'.repeat(32)}`,
  chainId: 31337,
  contractAddress: `0x${'33'.repeat(20)}`,
})

/** A signer whose key `authority` certified for Ada. */
async function signerOf(authority: SignerAuthority, account: { email: string; trust: 'email' | 'google' } = ADA) {
  const keys = await makeSignerKey()
  const certificate = await authority.issue(await certificationRequest(keys, account.email), account)
  const signer: CmsSigner = {
    key: webCryptoSigningKey(keys.privateKey),
    certificates: [certificate, ...authority.certificates],
  }
  return { signer, certificate, keys }
}

const development = () =>
  new SignerAuthority(identity.ca, developmentTimestampAuthority(identity.timestamping), TEST_STATUS_URLS)

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'signer-authority-'))
  ;[identity, tsa] = await Promise.all([developmentIdentity(dir), startOpensslTsa()])
  await writeFile(join(dir, 'content.bin'), CONTENT)
  await writeFile(join(dir, 'dev-ca.pem'), certificatePem(identity.ca.certificates[0]!))
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

describe('the development CA', () => {
  it('is one CA when instances on one DATA_DIR make it at the same moment', async () => {
    const shared = await mkdtemp(join(tmpdir(), 'signer-authority-race-'))
    try {
      const made = await Promise.all(Array.from({ length: 4 }, () => developmentIdentity(shared)))
      const pems = made.map((one) => certificatePem(one.ca.certificates[0]!))
      expect(new Set(pems).size).toBe(1)
      // And the key on disk is the key of that certificate: what it certifies after a restart chains to it.
      const reloaded = await developmentIdentity(shared)
      const authority = new SignerAuthority(
        reloaded.ca,
        developmentTimestampAuthority(reloaded.timestamping),
        TEST_STATUS_URLS,
      )
      const { signer } = await signerOf(authority)
      const timestamped = await authority.timestamp(
        await authority.check(await anchoredSignatureCms(signer, await request())),
      )
      const roots = parsePemCertificates(pems[0]!)
      expect(await checkCmsSignature(timestamped.cms, CONTENT, roots)).toMatchObject({ valid: true, trusted: true })
      expect((await readdir(shared)).sort()).toEqual(['pdf-signing'])
    } finally {
      await rm(shared, { recursive: true, force: true })
    }
  })

  it('is made once under DATA_DIR/pdf-signing, keys 0600, and the same after a restart', async () => {
    const again = await developmentIdentity(dir)
    expect(certificatePem(again.ca.certificates[0]!)).toBe(certificatePem(identity.ca.certificates[0]!))
    for (const name of ['ca-key.pem', 'timestamping-key.pem']) {
      expect((await stat(join(dir, 'pdf-signing', name))).mode & 0o777).toBe(0o600)
    }
    const text = (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'pdf-signing', 'ca.pem')])).stdout
    expect(text).toContain(
      'Subject: C = ZZ, O = Development only: not a trusted identity, CN = Document Anchoring Service development CA (untrusted)',
    )
    expect(text).toMatch(/Key Usage: critical\s+Certificate Sign, CRL Sign/)
    const timestamping = (
      await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'pdf-signing', 'timestamping.pem')])
    ).stdout
    expect(timestamping).toMatch(/Extended Key Usage: critical\s+Time Stamping/)
  })
})

describe('a signer certificate', () => {
  it('names the account’s e-mail alone, for document signing, under the policy of its sign-in', async () => {
    const { certificate } = await signerOf(development())
    await writeFile(join(dir, 'signer.pem'), certificatePem(certificate))
    const text = (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'signer.pem')])).stdout
    expect(text).toContain('Subject: emailAddress = ada@example.com, CN = ada@example.com')
    expect(text).toMatch(/Basic Constraints: critical\s+CA:FALSE/)
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation/)
    expect(text).toMatch(/Extended Key Usage: \s+(Document Signing|1\.3\.6\.1\.5\.5\.7\.3\.36), E-mail Protection/)
    expect(text).toMatch(/Subject Alternative Name: \s+email:ada@example.com/)
    expect(text).toMatch(/Policy: 2\.999\.6362\.2\.2/)
    const verified = await run('openssl', ['verify', '-CAfile', join(dir, 'dev-ca.pem'), join(dir, 'signer.pem')])
    expect(verified.stdout).toContain('signer.pem: OK')
  })

  it('is refused for a request its key did not sign, or for a key that is not P-256', async () => {
    const keys = await makeSignerKey()
    const other = await makeSignerKey()
    const csr = await certificationRequest(keys, ADA.email)
    // The request's public key replaced by another's: its signature no longer proves possession.
    const otherCsr = await certificationRequest(other, ADA.email)
    const spliced = Buffer.from(csr)
    const publicKeyAt = (der: Uint8Array) => Buffer.from(der).indexOf(Buffer.from('04', 'hex'), 40)
    Buffer.from(otherCsr).copy(spliced, publicKeyAt(csr), publicKeyAt(otherCsr), publicKeyAt(otherCsr) + 65)
    await expect(development().issue(new Uint8Array(spliced), ADA)).rejects.toThrow(CertificateRequestError)
    await expect(development().issue(new Uint8Array([1, 2, 3]), ADA)).rejects.toThrow(CertificateRequestError)
    await run('openssl', [
      'req',
      '-new',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'rsa.key'),
      '-subj',
      '/CN=x',
      '-outform',
      'DER',
      '-out',
      join(dir, 'rsa.csr'),
    ])
    const rsa = new Uint8Array(await import('node:fs/promises').then((fs) => fs.readFile(join(dir, 'rsa.csr'))))
    await expect(development().issue(rsa, ADA)).rejects.toThrow(/not for an ECDSA P-256 key/)
  })
})

describe('a PDF signature’s CMS', () => {
  for (const source of ['the development TSA', 'openssl ts over HTTP'] as const) {
    it(`verifies in OpenSSL with the signed attributes PAdES asks for and its anchor, timestamped by ${source}`, async () => {
      const timestamps =
        source === 'the development TSA'
          ? developmentTimestampAuthority(identity.timestamping)
          : httpTimestampAuthorities(
              { urls: [tsa.url], attemptTimeoutMs: 5_000, deadlineMs: 10_000, attempts: 2, roots: tsaRoots() },
              { onAttempt: () => {} },
            )
      const authority = new SignerAuthority(identity.ca, timestamps, TEST_STATUS_URLS)
      const { signer } = await signerOf(authority)
      const checked = await authority.check(await anchoredSignatureCms(signer, await request()))
      expect(checked.anchor).toEqual({
        chainId: 31337,
        contract: `0x${'33'.repeat(20)}`,
        txHash: `0x${'11'.repeat(32)}`,
        compositeHash: `0x${'22'.repeat(32)}`,
      })
      const signed = await authority.timestamp(checked)
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
      expect(signedAttributes).toContain('(2.999.6362.1)')
      expect(signedAttributes).not.toContain('signingTime')
      expect(structure).toContain('object: id-smime-aa-timeStampToken (1.2.840.113549.1.9.16.2.14)')
      expect(Math.abs(signed.timestampTime.getTime() - Date.now())).toBeLessThan(60_000)

      const roots = [identity.ca.certificates[0]!, ...parsePemCertificates(tsa.caPem)]
      const check = await checkCmsSignature(signed.cms, CONTENT, roots)
      expect(check).toMatchObject({ valid: true, trusted: true, signingCertificateV2: true, problems: [] })
      expect(check.timestamp).toMatchObject({ valid: true, trusted: true, authority: signed.timestampAuthority })
      expect(check.signer?.commonName).toBe(ADA.email)
    })
  }

  it('is refused before any timestamp when another CA certified it, it names no anchor, or its signature is forged', async () => {
    const authority = development()
    const { ca, timestamping } = await makeIdentity()
    const elsewhere = new SignerAuthority(
      identityOf(ca, timestamping).ca,
      developmentTimestampAuthority(identity.timestamping),
      TEST_STATUS_URLS,
    )
    const foreign = await signerOf(elsewhere)
    await expect(authority.check(await anchoredSignatureCms(foreign.signer, await request()))).rejects.toThrow(
      'its certificate was not issued by this service',
    )
    const { signer } = await signerOf(authority)
    const { buildSignedData, contentInfoDer } = await import('@docanchor/client')
    const anchorless = contentInfoDer(
      await buildSignedData({
        signer,
        contentType: CMS_OID.data,
        messageDigest: Buffer.from(await digest(CONTENT), 'hex'),
      }),
    )
    await expect(authority.check(anchorless)).rejects.toThrow('its signed attributes name no anchor')
    // Ada's certificate on a CMS another key signed.
    const mallory = await signerOf(authority, { email: 'mallory@example.com', trust: 'email' })
    const forged = await anchoredSignatureCms({ ...mallory.signer, certificates: signer.certificates }, await request())
    await expect(authority.check(forged)).rejects.toThrow('its signature does not verify with its certificate')
    expect(certificateDer(signer.certificates[1]!)).toEqual(certificateDer(identity.ca.certificates[0]!))
  })

  it('carries a development TSA token that `openssl ts -verify` accepts', async () => {
    const token = await developmentTimestampAuthority(identity.timestamping).timestamp(IMPRINT)
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

  it('gives its tokens serial numbers in minimal DER (a leading zero byte is malformed to BouncyCastle)', async () => {
    const authority = developmentTimestampAuthority(identity.timestamping)
    for (let i = 0; i < 600; i++) {
      const { der } = await authority.timestamp(IMPRINT)
      const signedData = new SignedData({
        schema: new ContentInfo({ schema: fromBER(der.slice().buffer).result }).content,
      })
      const content = signedData.encapContentInfo.eContent!.valueBlock.valueHexView
      const serial = new TSTInfo({ schema: fromBER(content.slice().buffer).result }).serialNumber.valueBlock
        .valueHexView
      const redundant =
        serial.length > 1 && ((serial[0] === 0 && serial[1]! < 0x80) || (serial[0] === 0xff && serial[1]! >= 0x80))
      expect(redundant, Buffer.from(serial).toString('hex')).toBe(false)
    }
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
        {
          urls: [refusing.url, silent.url, tsa.url],
          attemptTimeoutMs: 500,
          deadlineMs: 5_000,
          attempts: 3,
          roots: tsaRoots(),
        },
        {
          onAttempt: (url, outcome, reason) => attempts.push(`${new URL(url).port} ${outcome} ${reason ?? ''}`.trim()),
        },
      )
      const started = performance.now()
      const token = await authorities.timestamp(IMPRINT)
      expect(performance.now() - started).toBeLessThan(3_000)
      expect(token.authority).toBe('Test TSA')
      expect(attempts).toEqual([
        `${new URL(refusing.url).port} failed HTTP 500`,
        `${new URL(silent.url).port} failed no answer within 500 ms`,
        `${new URL(tsa.url).port} ok`,
      ])
      // The one that answered is asked first next time.
      attempts.length = 0
      await authorities.timestamp(IMPRINT)
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
        {
          urls: [silent.url, 'http://127.0.0.1:1/tsa'],
          attemptTimeoutMs: 400,
          deadlineMs: 1_000,
          attempts: 10,
          roots: [],
        },
        { onAttempt: () => {} },
      )
      const started = performance.now()
      const error = await authorities.timestamp(IMPRINT).catch((e: unknown) => e)
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
      { urls: [tsa.url], attemptTimeoutMs: 2_000, deadlineMs: 2_000, attempts: 1, roots: tsaRoots() },
      { onAttempt: (_url, _outcome, reason) => reasons.push(reason) },
    )
    const token = await authorities.timestamp(IMPRINT)
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
    const check = await (await import('@docanchor/client')).checkTimestampToken(
      token.der,
      { bytes: new Uint8Array([1]) },
      [],
    )
    expect(check.valid).toBe(false)
    expect(check.problems).toContain('the timestamp is for something else than this signature')
    expect(CMS_OID.tstInfo).toBe('1.2.840.113549.1.9.16.1.4')
  })

  it('refuses a token that does not chain to TSA_TRUSTED_CERTIFICATES', async () => {
    const impostor = await startOpensslTsa('Test TSA')
    const reasons: (string | undefined)[] = []
    try {
      // Same name, another CA: what a TSA reached over plain HTTP through someone else's proxy would answer.
      const authorities = httpTimestampAuthorities(
        { urls: [impostor.url], attemptTimeoutMs: 2_000, deadlineMs: 2_000, attempts: 1, roots: tsaRoots() },
        { onAttempt: (_url, _outcome, reason) => reasons.push(reason) },
      )
      await expect(authorities.timestamp(IMPRINT)).rejects.toBeInstanceOf(TimestampUnavailableError)
      expect(reasons).toEqual([expect.stringMatching(/does not chain to TSA_TRUSTED_CERTIFICATES/)])
    } finally {
      await impostor.close()
    }
  })
})
