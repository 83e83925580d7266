// The service as the certificate authority of its signers (issue 37): it certifies a signer's own key under the
// account's verified e-mail, and timestamps a PDF signature that such a key made for one of the account's anchors.
// It signs no document and no digest itself: nothing it answers is a signature a reader attributes to the service.
// Web APIs only, so that the client package's tests certify and timestamp with it in Chromium too.

import {
  type AnchorReference,
  addUnsignedAttribute,
  CMS_OID,
  type CmsSigner,
  certificateEmail,
  contentInfoDer,
  messageDigestOf,
  readAnchorAttribute,
  signatureValue,
  signedDataOf,
  signerCertificateOf,
  signerInfoVerifies,
  type TrustAnchor,
  toHex,
} from '@docanchor/client'
import type { Certificate, SignedData } from 'pkijs'
import { SignatureRefusedError } from './errors.ts'
import { issueSignerCertificate, provenRequest, type StatusUrls, serialHex } from './signer-certificate.ts'
import type { TimestampAuthority } from './timestamp-authority.ts'

/** How long a signer certificate is valid: a device keeps its key for a year, then asks again. */
export const SIGNER_CERTIFICATE_VALIDITY_MS = 365 * 24 * 3600 * 1000

export interface TimestampedSignature {
  cms: Uint8Array
  /** The PDF's byte-range digest the CMS signs (its messageDigest), lower-case hex. */
  digest: string
  timestampTime: Date
  timestampAuthority: string
}

/** What a CMS handed in for timestamping says of itself, checked. */
export interface CheckedSignature {
  signedData: SignedData
  signer: Certificate
  anchor: AnchorReference
  digest: string
}

export class SignerAuthority {
  constructor(
    /** The issuing CA: its key and its chain, the issuing certificate first. */
    private readonly ca: CmsSigner,
    private readonly timestamps: TimestampAuthority,
    /** Where verifiers find the CA and the revocation status, named in every certificate issued. */
    private readonly urls: StatusUrls,
  ) {}

  /** The issuing CA's key and chain: what signs the revocation status too. */
  get issuer(): CmsSigner {
    return this.ca
  }

  /** The CA chain, issuing certificate first: what /api/info publishes for verifiers to trust. */
  get certificates(): Certificate[] {
    return this.ca.certificates
  }

  /** A certificate for the key of `csr` (PKCS#10 DER, signed by that key), naming `email`. */
  async issue(csr: Uint8Array, account: { email: string; trust: TrustAnchor }, now = new Date()): Promise<Certificate> {
    const request = await provenRequest(csr)
    const caNotAfter = this.ca.certificates[0]!.notAfter.value
    return issueSignerCertificate({
      request,
      email: account.email,
      trust: account.trust,
      issuer: this.ca,
      notBefore: new Date(now.getTime() - 60_000),
      notAfter: new Date(Math.min(now.getTime() + SIGNER_CERTIFICATE_VALIDITY_MS, caNotAfter.getTime())),
      urls: this.urls,
    })
  }

  /**
   * Reads a PDF signature's CMS as a signer made it: one signer, whose certificate this CA issued (its chain is
   * checked against the CA's key), whose signed attributes name an anchor and the byte-range digest, and whose
   * signature over them verifies. Throws SignatureRefusedError saying what is wrong.
   */
  async check(cms: Uint8Array): Promise<CheckedSignature> {
    const signedData = signedDataOf(cms)
    const signerInfo = signedData?.signerInfos.length === 1 ? signedData.signerInfos[0] : undefined
    if (!signedData || !signerInfo) throw new SignatureRefusedError('it is not a CMS SignedData with one signer')
    if (signerInfo.unsignedAttrs) throw new SignatureRefusedError('it carries unsigned attributes already')
    const signer = signerCertificateOf(signedData, signerInfo)
    if (!signer) throw new SignatureRefusedError('it does not carry its signer’s certificate')
    const issuer = this.ca.certificates[0]!
    if (!signer.issuer.isEqual(issuer.subject) || !(await signer.verify(issuer).catch(() => false))) {
      throw new SignatureRefusedError('its certificate was not issued by this service')
    }
    const anchor = readAnchorAttribute(signerInfo)
    if (!anchor) throw new SignatureRefusedError('its signed attributes name no anchor')
    const stated = messageDigestOf(signerInfo)
    const digest = stated ? toHex(stated) : ''
    const sha256 = signerInfo.digestAlgorithm.algorithmId === CMS_OID.sha256
    if (!sha256 || !/^[0-9a-f]{64}$/.test(digest)) {
      throw new SignatureRefusedError('its signed attributes hold no SHA-256 digest')
    }
    // The byte range is the client's: the signature is checked against the digest its own attributes state.
    if (!(await signerInfoVerifies(signerInfo, signer, stated!)))
      throw new SignatureRefusedError('its signature does not verify with its certificate')
    if (certificateEmail(signer) === null) throw new SignatureRefusedError('its certificate names no e-mail')
    return { signedData, signer, anchor, digest }
  }

  /** The roots the timestamp authority's tokens chain to: what verifiers trust for timestamps. */
  get timestampRoots(): Certificate[] {
    return this.timestamps.roots
  }

  /**
   * Whether the CA issued `serial` (lower-case hex) to one of the service's own authorities (the development TSA):
   * those are good as long as the service runs them, and have no row among the signers' certificates.
   */
  issuedToService(serial: string): boolean {
    return this.timestamps.issuedByService.some((certificate) => serialHex(certificate.serialNumber) === serial)
  }

  /** The signature with its timestamp token added (PAdES B-T): what goes into the PDF's /Contents. */
  async timestamp(checked: CheckedSignature): Promise<TimestampedSignature> {
    const imprint = await crypto.subtle.digest('SHA-256', signatureValue(checked.signedData) as Uint8Array<ArrayBuffer>)
    const token = await this.timestamps.timestamp(new Uint8Array(imprint))
    addUnsignedAttribute(checked.signedData, CMS_OID.signatureTimeStampToken, token.der)
    return {
      cms: contentInfoDer(checked.signedData),
      digest: checked.digest,
      timestampTime: token.time,
      timestampAuthority: token.authority,
    }
  }

  /**
   * A document timestamp's token (PAdES B-LTA): the time-stamping authority's statement that `digest` (the SHA-256 of
   * a PDF's byte range) existed now. A timestamp names no signer, so anyone signed in may have one.
   */
  async documentTimestamp(digest: Uint8Array): Promise<Uint8Array> {
    return (await this.timestamps.timestamp(digest)).der
  }
}
