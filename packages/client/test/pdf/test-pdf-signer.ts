// Plays the service and its signers for tests that anchor without a service: the service's own signer CA (a
// development-style CA made in memory, with its in-process TSA), and signers whose keys it certifies, each signing
// its anchored signatures' CMS itself, which the CA then timestamps. Web APIs only, so it runs in Chromium too.
import { developmentTimestampAuthority } from '../../../../src/pdf-signing/development-timestamp-authority.ts'
import { identityOf, makeIdentity } from '../../../../src/pdf-signing/issue-certificate.ts'
import { SignerAuthority } from '../../../../src/pdf-signing/signer-authority.ts'
import { statusUrlsOf } from '../../../../src/pdf-signing/signer-certificate.ts'
import type { TrustAnchor } from '../../src/formats/field-rules.ts'
import { anchoredSignatureCms } from '../../src/pdf/anchored-signature.ts'
import { certificateDer } from '../../src/pdf/cms/der.ts'
import type { CmsSigner } from '../../src/pdf/cms/signed-data.ts'
import { certificationRequest, makeSignerKey } from '../../src/pdf/cms/signer-request.ts'
import { webCryptoSigningKey } from '../../src/pdf/cms/signing-key.ts'
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
}

export async function testService(): Promise<TestService> {
  const { ca, timestamping } = await makeIdentity()
  const identity = identityOf(ca, timestamping)
  const authority = new SignerAuthority(
    identity.ca,
    developmentTimestampAuthority(identity.timestamping),
    statusUrlsOf('https://anchors.example'),
  )
  return {
    authority,
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
