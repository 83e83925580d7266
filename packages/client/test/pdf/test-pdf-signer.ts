// Plays the service's PDF signer for tests that anchor without a service: the service's own signer (CMS with a
// development-style identity made in memory, and its in-process TSA), Web APIs only, so it runs in Chromium too.
import { developmentTimestampAuthority } from '../../../../src/pdf-signing/development-timestamp-authority.ts'
import { identityOf, makeIdentity } from '../../../../src/pdf-signing/issue-certificate.ts'
import { PdfSigner } from '../../../../src/pdf-signing/pdf-signer.ts'
import { fromHex } from '../../src/formats/hex.ts'
import type { PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'

let made: Promise<PdfSigner> | undefined

function testSigner(): Promise<PdfSigner> {
  made ??= makeIdentity().then(({ ca, signing, timestamping }) => {
    const identity = identityOf(ca, signing, timestamping)
    return new PdfSigner(identity.signing, developmentTimestampAuthority(identity.timestamping))
  })
  return made
}

/** The CMS the service would answer for `request` (any transaction: tests check what the PDF layer does). */
export async function testPdfSignature(request: PdfSignatureRequest): Promise<Uint8Array> {
  return (await (await testSigner()).sign(fromHex(request.digest))).cms
}
