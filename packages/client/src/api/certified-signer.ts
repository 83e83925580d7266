// A signer an application keeps for a session: its own P-256 key (made here unless given: an app that keeps one in
// the OS keychain passes it), certified by the service's CA under the account's verified e-mail, and signPdf's
// `pdfSignature` that signs each anchored signature's CMS with it and has the service add its timestamp.

import { fromBase64 } from '../formats/base64.ts'
import { anchoredSignatureCms } from '../pdf/anchored-signature.ts'
import { certificateOf } from '../pdf/cms/der.ts'
import type { CmsSigner } from '../pdf/cms/signed-data.ts'
import { certificationRequest, makeSignerKey } from '../pdf/cms/signer-request.ts'
import { webCryptoSigningKey } from '../pdf/cms/signing-key.ts'
import type { PdfSignatureRequest } from '../pdf/sign-pdf.ts'
import { type AnchorClient, pdfSignatureCms } from './anchor-client.ts'

export interface CertifiedSigner {
  signer: CmsSigner
  pdfSignature(request: PdfSignatureRequest): Promise<Uint8Array>
}

export async function certifiedSigner(
  api: Pick<AnchorClient, 'signerCertificate' | 'pdfSignature'>,
  keys?: CryptoKeyPair,
): Promise<CertifiedSigner> {
  const pair = keys ?? (await makeSignerKey())
  const issued = await api.signerCertificate(await certificationRequest(pair, 'signer'))
  const signer: CmsSigner = {
    key: webCryptoSigningKey(pair.privateKey),
    certificates: [issued.certificate, ...issued.chain].map((base64) => certificateOf(fromBase64(base64))),
  }
  return {
    signer,
    pdfSignature: async (request) =>
      pdfSignatureCms(
        await api.pdfSignature({ txHash: request.txHash, cms: await anchoredSignatureCms(signer, request) }),
      ),
  }
}
