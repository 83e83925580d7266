// The signer CA's revocation status, checked by OpenSSL (which shares no code with the service): each signer
// certificate names the OCSP responder, the CA's certificate and the CRL; `openssl ocsp` verifies the responder's
// answer against the CA and reads good, then revoked once the account is blocked; `openssl crl` verifies the list and
// `openssl verify -crl_check` refuses a revoked certificate and passes a good one, at a time given too (issue 37).
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { revokeSignerCertificates } from '../../src/pdf-signing/signer-certificate-store.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { issueSignerCertificate } from '../helpers/pdf-signing/signer-certificate.ts'

const run = promisify(execFile)

let t: TestApp
let url: string
let dir: string
let ada: SignedInUser
let bob: SignedInUser

const pem = (base64: string) =>
  `-----BEGIN CERTIFICATE-----\n${base64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`

/** `openssl ocsp` for the certificate in `file`, against the service's responder, its answer verified with the CA. */
async function ocsp(file: string): Promise<string> {
  const { stdout, stderr } = await run('openssl', [
    ...['ocsp', '-issuer', join(dir, 'ca.pem'), '-cert', join(dir, file)],
    ...['-url', `${url}/ca/ocsp`, '-CAfile', join(dir, 'ca.pem')],
  ])
  return stdout + stderr
}

beforeAll(async () => {
  t = await createTestApp()
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'certificate-status-'))
  ada = await signInTestUser(t, 'ada@example.com')
  bob = await signInTestUser(t, 'bob@example.com')
  const info = (await t.app.inject({ url: '/api/info' })).json() as { pdfSigning: { certificates: string[] } }
  await writeFile(join(dir, 'ca.pem'), info.pdfSigning.certificates.join(''))
  await writeFile(join(dir, 'ada.pem'), pem((await issueSignerCertificate(t.app, ada.headers)).certificate))
  await writeFile(join(dir, 'bob.pem'), pem((await issueSignerCertificate(t.app, bob.headers)).certificate))
}, 60_000)

afterAll(async () => {
  await t?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

describe('the signer CA’s revocation status', () => {
  it('is named in every certificate: the OCSP responder, the CA’s certificate and the CRL', async () => {
    const text = (await run('openssl', ['x509', '-noout', '-text', '-in', join(dir, 'ada.pem')])).stdout
    expect(text).toMatch(/OCSP - URI:http:\/\/[^\s]+\/ca\/ocsp/)
    expect(text).toMatch(/CA Issuers - URI:http:\/\/[^\s]+\/ca\/issuer\.cer/)
    expect(text).toMatch(/X509v3 CRL Distribution Points:\s+Full Name:\s+URI:http:\/\/[^\s]+\/ca\/crl/)
    const issuer = await fetch(`${url}/ca/issuer.cer`)
    expect(issuer.headers.get('content-type')).toBe('application/pkix-cert')
    await writeFile(join(dir, 'issuer.cer'), new Uint8Array(await issuer.arrayBuffer()))
    const subject = await run('openssl', [
      'x509',
      '-inform',
      'DER',
      '-in',
      join(dir, 'issuer.cer'),
      '-noout',
      '-subject',
    ])
    expect(subject.stdout).toContain('Document Anchoring Service development CA (untrusted)')
  })

  it('answers OCSP good, then revoked once the account is blocked, each answer verified against the CA', async () => {
    const good = await ocsp('ada.pem')
    expect(good).toContain('Response verify OK')
    expect(good).toMatch(/ada\.pem: good/)
    await revokeSignerCertificates(t.database.handle.db, ada.id, 'blocked')
    const revoked = await ocsp('ada.pem')
    expect(revoked).toContain('Response verify OK')
    expect(revoked).toMatch(/ada\.pem: revoked/)
    expect(await ocsp('bob.pem')).toMatch(/bob\.pem: good/)
  })

  it('publishes a CRL the CA signed, with which OpenSSL refuses the revoked certificate and passes the good one', async () => {
    const response = await fetch(`${url}/ca/crl`)
    expect(response.headers.get('content-type')).toBe('application/pkix-crl')
    await writeFile(join(dir, 'crl.der'), new Uint8Array(await response.arrayBuffer()))
    const checked = await run('openssl', [
      ...['crl', '-inform', 'DER', '-in', join(dir, 'crl.der'), '-CAfile', join(dir, 'ca.pem')],
      ...['-out', join(dir, 'crl.pem'), '-outform', 'PEM'],
    ])
    expect(checked.stdout + checked.stderr).toContain('verify OK')
    const verify = (file: string, attime?: Date) =>
      run('openssl', [
        'verify',
        '-CAfile',
        join(dir, 'ca.pem'),
        // The list is good for an hour: a time beyond it is checked against the chain alone.
        ...(attime
          ? ['-attime', String(Math.floor(attime.getTime() / 1000))]
          : ['-crl_check', '-CRLfile', join(dir, 'crl.pem')]),
        join(dir, file),
      ]).then(
        ({ stdout }) => stdout,
        (error: { stdout?: string; stderr?: string }) => `${error.stdout ?? ''}${error.stderr ?? ''}`,
      )
    expect(await verify('bob.pem')).toContain('bob.pem: OK')
    expect(await verify('ada.pem')).toContain('certificate revoked')
    // At a time of the file's choosing (its timestamp's): valid within the certificate's year, not after it. What
    // proves the signature was made within it is the timestamp, which the DSS keeps verifiable.
    expect(await verify('bob.pem', new Date(Date.now() + 300 * 86_400_000))).toContain('bob.pem: OK')
    expect(await verify('bob.pem', new Date(Date.now() + 2 * 365 * 86_400_000))).toContain('certificate has expired')
  })

  it('answers a body that is no OCSP request with malformedRequest, not an error', async () => {
    const response = await fetch(`${url}/ca/ocsp`, {
      method: 'POST',
      headers: { 'content-type': 'application/ocsp-request' },
      body: new Uint8Array([1, 2, 3]),
    })
    expect(response.status).toBe(200)
    expect(Buffer.from(await response.arrayBuffer()).toString('hex')).toBe('30030a0101')
  })
})
