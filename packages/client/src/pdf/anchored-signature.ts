// The CMS of an anchored PDF signature as its signer makes it: detached over the revision's byte range (its digest),
// with the signer's own key and certificate, and the anchor it belongs to among the signed attributes. The service
// then adds its timestamp token (`POST /api/pdf-signatures`), without which it is PAdES B-B.
import { fromHex } from '../formats/hex.ts'
import { anchorAttribute } from './anchor-attribute.ts'
import { OID } from './cms/der.ts'
import { buildSignedData, type CmsSigner, contentInfoDer } from './cms/signed-data.ts'
import type { PdfSignatureRequest } from './sign-pdf.ts'

export async function anchoredSignatureCms(signer: CmsSigner, request: PdfSignatureRequest): Promise<Uint8Array> {
  const { chainId, contractAddress } = request
  if (chainId === undefined || contractAddress === undefined) {
    throw new Error('an anchored PDF signature names its chain and contract: give signPdf chainId and contractAddress')
  }
  const signedData = await buildSignedData({
    signer,
    contentType: OID.data,
    messageDigest: fromHex(request.digest),
    attributes: [
      anchorAttribute({
        chainId,
        contract: contractAddress.toLowerCase(),
        txHash: request.txHash.toLowerCase(),
        compositeHash: request.compositeHash.toLowerCase(),
      }),
    ],
  })
  return contentInfoDer(signedData)
}
