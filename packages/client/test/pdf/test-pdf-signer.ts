// Plays the service and its signers for tests that anchor without a service: the service's own signer CA (a
// development-style CA made in memory, with its in-process TSA), and signers whose keys it certifies, each signing
// its anchored signatures' CMS itself, which the CA then timestamps. Web APIs only, so it runs in Chromium too.
import { developmentTimestampAuthority } from '../../../../src/pdf-signing/development-timestamp-authority.ts'
import { identityOf, makeIdentity } from '../../../../src/pdf-signing/issue-certificate.ts'
import { type CertificateStatus, ocspResponse, revocationList } from '../../../../src/pdf-signing/revocation-status.ts'
import { SignerAuthority } from '../../../../src/pdf-signing/signer-authority.ts'
import { STATUS_PATHS, statusUrlsOf } from '../../../../src/pdf-signing/signer-certificate.ts'
import type { TrustAnchor } from '../../src/formats/field-rules.ts'
import { anchoredSignatureCms } from '../../src/pdf/anchored-signature.ts'
import { certificateDer } from '../../src/pdf/cms/der.ts'
import type { CmsSigner } from '../../src/pdf/cms/signed-data.ts'
import { certificationRequest, makeSignerKey } from '../../src/pdf/cms/signer-request.ts'
import { webCryptoSigningKey } from '../../src/pdf/cms/signing-key.ts'
import type { LongTermValidationOptions } from '../../src/pdf/long-term-validation.ts'
import { revocationSource } from '../../src/pdf/revocation-source.ts'
import type { PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'

/** Where a test that names no chain anchors: what the embedded anvil uses, and no contract in particular. */
const TEST_CHAIN = { chainId: 31337, contractAddress: `0x${'00'.repeat(20)}` }

export interface TestService {
  authority: SignerAuthority
  /** The CA's certificates (DER), as /api/info publishes them. */
  published: Uint8Array[]
  /** A signer whose key the CA certified for `email`. */
  signer(email?: string, trust?: TrustAnchor): Promise<CmsSigner>
  /** signPdf's `pdfSignature` for `signer`: its own CMS, naming the anchor, then the CA's timestamp. */
  pdfSignature(signer: CmsSigner): (request: PdfSignatureRequest) => Promise<Uint8Array>
  /**
   * Long-term validation as the service gives it: its TSA's document timestamps, and its CA's OCSP responder and CRL
   * (reached through revocationSource, by the URLs the certificates name), answering `statusOf` (default: good).
   */
  longTermValidation(statusOf?: StatusOf): LongTermValidationOptions
  /** How many OCSP and CRL requests the CA answered. */
  statusRequests: { ocsp: number; crl: number }
}

/** A certificate's status by its serial (lower-case hex), as the CA's database would answer. */
export type StatusOf = (serial: string) => Promise<CertificateStatus>

export async function testService(): Promise<TestService> {
  const { ca, timestamping } = await makeIdentity()
  const identity = identityOf(ca, timestamping)
  const authority = new SignerAuthority(
    identity.ca,
    developmentTimestampAuthority(identity.timestamping),
    statusUrlsOf('https://anchors.example'),
  )
  const statusRequests = { ocsp: 0, crl: 0 }
  const caResponder = (statusOf: StatusOf): typeof fetch =>
    (async (input: string | URL | Request, init?: RequestInit) => {
      const url = new URL(String(input instanceof Request ? input.url : input))
      if (url.pathname === STATUS_PATHS.ocsp) {
        statusRequests.ocsp++
        const body = new Uint8Array(await new Response(init?.body).arrayBuffer())
        return new Response((await ocspResponse(identity.ca, body, statusOf)) as Uint8Array<ArrayBuffer>)
      }
      if (url.pathname === STATUS_PATHS.crl) {
        statusRequests.crl++
        return new Response((await revocationList(identity.ca, [])) as Uint8Array<ArrayBuffer>)
      }
      return new Response(null, { status: 404 })
    }) as typeof fetch
  return {
    authority,
    statusRequests,
    longTermValidation: (statusOf = async () => ({ state: 'good' })) => ({
      documentTimestamp: (digest) => authority.documentTimestamp(digest),
      revocation: revocationSource({
        fetch: caResponder(async (serial) =>
          authority.issuedToService(serial) ? { state: 'good' } : statusOf(serial),
        ),
        serviceOcspUrl: statusUrlsOf('https://anchors.example').ocsp,
        serviceCertificates: authority.certificates.map(certificateDer),
      }),
    }),
    published: authority.certificates.map(certificateDer),
    async signer(email = 'signer@example.com', trust = 'email') {
      const keys = await makeSignerKey()
      const certificate = await authority.issue(await certificationRequest(keys, email), { email, trust })
      return { key: webCryptoSigningKey(keys.privateKey), certificates: [certificate, ...authority.certificates] }
    },
    pdfSignature: (signer) => async (request) => {
      const cms = await anchoredSignatureCms(signer, {
        ...request,
        chainId: request.chainId ?? TEST_CHAIN.chainId,
        contractAddress: request.contractAddress ?? TEST_CHAIN.contractAddress,
      })
      return (await authority.timestamp(await authority.check(cms))).cms
    },
  }
}

let shared: Promise<{ service: TestService; sign: (request: PdfSignatureRequest) => Promise<Uint8Array> }> | undefined

/** The PDF signature of one shared test signer, for tests of the PDF layer that check no certificate in particular. */
export async function testPdfSignature(request: PdfSignatureRequest): Promise<Uint8Array> {
  shared ??= testService().then(async (service) => ({
    service,
    sign: service.pdfSignature(await service.signer()),
  }))
  return (await shared).sign(request)
}
