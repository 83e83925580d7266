// The service's PDF signatures (PAdES B-T): a CMS SignedData over the digest of a PDF's byte range, which the client
// computed (the document never reaches the service), with a signature timestamp token from a TSA.
import {
  addUnsignedAttribute,
  buildSignedData,
  CMS_OID,
  type CmsSigner,
  contentInfoDer,
  signatureValue,
} from '@docanchor/client'
import type { Certificate } from 'pkijs'
import type { TimestampAuthority } from './timestamp-authority.ts'

export interface PdfSignatureCms {
  /** ContentInfo DER, to go into the PDF's /Contents as it is. */
  cms: Uint8Array
  timestampTime: Date
  timestampAuthority: string
}

export class PdfSigner {
  constructor(
    private readonly signer: CmsSigner,
    private readonly timestamps: TimestampAuthority,
  ) {}

  /** The signing certificate first, then its chain: what /api/info publishes for verifiers to trust or pin. */
  get certificates(): Certificate[] {
    return this.signer.certificates
  }

  async sign(digest: Uint8Array): Promise<PdfSignatureCms> {
    const signedData = await buildSignedData({ signer: this.signer, contentType: CMS_OID.data, messageDigest: digest })
    const token = await this.timestamps.timestamp(signatureValue(signedData))
    addUnsignedAttribute(signedData, CMS_OID.signatureTimeStampToken, token.der)
    return { cms: contentInfoDer(signedData), timestampTime: token.time, timestampAuthority: token.authority }
  }
}
