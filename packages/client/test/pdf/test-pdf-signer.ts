// Plays the service's PDF signer for tests that anchor without a service: the service's own signer (CMS with a
// development-style identity made in memory, and its in-process TSA), Web APIs only, so it runs in Chromium too.
import { developmentTimestampAuthority } from '../../../../src/pdf-signing/development-timestamp-authority.ts'
import { identityOf, makeIdentity } from '../../../../src/pdf-signing/issue-certificate.ts'
import { PdfSigner } from '../../../../src/pdf-signing/pdf-signer.ts'
import { fromHex } from '../../src/formats/hex.ts'
import type { PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'

let made: Promise<{ signer: PdfSigner; rootDer: Uint8Array }> | undefined

function testSigner() {
  made ??= makeIdentity().then(({ ca, signing, timestamping }) => {
    const identity = identityOf(ca, signing, timestamping)
    return {
      signer: new PdfSigner(identity.signing, developmentTimestampAuthority(identity.timestamping)),
      rootDer: new Uint8Array(ca.certificate.toSchema(true).toBER(false)),
    }
  })
  return made
}

/** The CMS the service would answer for `request` (any transaction: tests check what the PDF layer does). */
export async function testPdfSignature(request: PdfSignatureRequest): Promise<Uint8Array> {
  const { signer } = await testSigner()
  return (await signer.sign(fromHex(request.digest))).cms
}

/** The test signer's root certificate (DER), for checkers that are to trust it. */
export async function testSignerRoot(): Promise<Uint8Array> {
  return (await testSigner()).rootDer
}
