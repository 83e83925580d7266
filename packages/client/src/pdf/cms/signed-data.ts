// CMS SignedData (RFC 5652) as PAdES and RFC 3161 want it, built by the service (the client package owns the
// formats both sides share): signed attributes contentType, messageDigest and
// signingCertificateV2 (RFC 5035), no signing-time (PAdES B-B takes the time from the PDF's /M and the timestamp
// token, never from the signer's clock), the signer's certificate chain, SHA-256 throughout. One builder for the PDF
// signatures' CMS (detached: the PDF's bytes stay with the client) and the development TSA's tokens (TSTInfo inside).
import { ObjectIdentifier, OctetString, RawData, Sequence } from 'asn1js'
import {
  AlgorithmIdentifier,
  Attribute,
  type Certificate,
  ContentInfo,
  EncapsulatedContentInfo,
  GeneralName,
  GeneralNames,
  IssuerAndSerialNumber,
  IssuerSerial,
  SignedAndUnsignedAttributes,
  SignedData,
  SignerInfo,
} from 'pkijs'
import { buffer, OID, sha256 } from './der.ts'
import type { DocumentSigningKey } from './signing-key.ts'

export interface CmsSigner {
  key: DocumentSigningKey
  /** The signer's certificate first, then the chain up to (and including) the root. */
  certificates: Certificate[]
}

export interface SignedDataInput {
  signer: CmsSigner
  /** What is signed: id-data for a PDF signature (detached), id-ct-TSTInfo for a timestamp token (`content`). */
  contentType: string
  /** SHA-256 of the content: the PDF's byte range, or the DER of the TSTInfo. */
  messageDigest: Uint8Array
  /** Encapsulated content (a timestamp token's TSTInfo); absent for a detached signature. */
  content?: Uint8Array
  /** More signed attributes: the anchor a PDF signature belongs to (anchor-attribute.ts). */
  attributes?: readonly Attribute[]
}

export async function buildSignedData(input: SignedDataInput): Promise<SignedData> {
  const [certificate] = input.signer.certificates
  if (!certificate) throw new Error('a CMS signer needs its certificate')
  const sha256 = () => new AlgorithmIdentifier({ algorithmId: OID.sha256 })
  const signedAttrs = new SignedAndUnsignedAttributes({
    type: 0,
    attributes: [
      new Attribute({ type: OID.contentType, values: [new ObjectIdentifier({ value: input.contentType })] }),
      new Attribute({ type: OID.messageDigest, values: [new OctetString({ valueHex: buffer(input.messageDigest) })] }),
      await signingCertificateV2(certificate),
      ...(input.attributes ?? []),
    ],
  })
  // The signature covers the attributes' DER as a SET (tag 0x31), not as the [0] IMPLICIT field they are sent as.
  const toSign = new Uint8Array(signedAttrs.toSchema().toBER(false))
  toSign[0] = 0x31
  const signerInfo = new SignerInfo({
    version: 1,
    sid: new IssuerAndSerialNumber({ issuer: certificate.issuer, serialNumber: certificate.serialNumber }),
    digestAlgorithm: sha256(),
    signedAttrs,
    signatureAlgorithm: new AlgorithmIdentifier({
      algorithmId: input.signer.key.keyType === 'ec' ? OID.ecdsaWithSha256 : OID.sha256WithRsa,
    }),
    signature: new OctetString({ valueHex: buffer(await input.signer.key.sign(toSign)) }),
  })
  const encapContentInfo = new EncapsulatedContentInfo({ eContentType: input.contentType })
  // Set after construction: pkijs's constructor turns the content into a constructed (BER) OCTET STRING, and a
  // timestamp token's TSTInfo is DER.
  if (input.content) encapContentInfo.eContent = new OctetString({ valueHex: buffer(input.content) })
  return new SignedData({
    version: 1,
    encapContentInfo,
    digestAlgorithms: [sha256()],
    certificates: input.signer.certificates.map(encodedOnce),
    signerInfos: [signerInfo],
  })
}

/** Adds an unsigned attribute (the signature's timestamp token) to the first signer. */
export function addUnsignedAttribute(signedData: SignedData, type: string, valueDer: Uint8Array): void {
  const signerInfo = signedData.signerInfos[0]!
  if (!isOneSequence(valueDer)) throw new Error('the attribute value is not one DER SEQUENCE')
  signerInfo.unsignedAttrs ??= new SignedAndUnsignedAttributes({ type: 1, attributes: [] })
  // Carried as the bytes given: re-encoding a token (and the certificates in it) would only cost time.
  signerInfo.unsignedAttrs.attributes.push(new Attribute({ type, values: [new EncodedDer({ data: valueDer })] }))
}

/**
 * The bytes are one DER SEQUENCE, by its tag and length alone: what comes to be added (a timestamp token) was checked
 * where it came from, and parsing it whole again would cost as much as the signature.
 */
function isOneSequence(der: Uint8Array): boolean {
  if (der.length < 2 || der[0] !== 0x30) return false
  const first = der[1]!
  if (first < 0x80) return 2 + first === der.length
  const lengthBytes = first & 0x7f
  if (lengthBytes === 0 || lengthBytes > 4 || der.length < 2 + lengthBytes) return false
  let length = 0
  for (let i = 0; i < lengthBytes; i++) length = length * 256 + der[2 + i]!
  return 2 + lengthBytes + length === der.length
}

/** The SignedData as the DER of its ContentInfo: what a PDF's /Contents and a TSA's reply carry. */
export function contentInfoDer(signedData: SignedData): Uint8Array {
  const info = new ContentInfo({ contentType: OID.signedData, content: signedData.toSchema(true) })
  return new Uint8Array(info.toSchema().toBER(false))
}

/** The value of the first signer's signature, which a timestamp token's imprint covers. */
export function signatureValue(signedData: SignedData): Uint8Array {
  return new Uint8Array(signedData.signerInfos[0]!.signature.valueBlock.valueHexView)
}

/**
 * ESS signing-certificate-v2 (RFC 5035): binds the signer's certificate into what is signed, so that no other
 * certificate with the same key can be put in its place. The hash algorithm is the default, SHA-256, and so omitted.
 */
async function signingCertificateV2(certificate: Certificate): Promise<Attribute> {
  const hash = buffer(await sha256(derOf(certificate)))
  const issuerSerial = new IssuerSerial({
    issuer: new GeneralNames({ names: [new GeneralName({ type: 4, value: certificate.issuer })] }),
    serialNumber: certificate.serialNumber,
  })
  const essCertIdV2 = new Sequence({ value: [new OctetString({ valueHex: hash }), issuerSerial.toSchema()] })
  return new Attribute({
    type: OID.signingCertificateV2,
    values: [new Sequence({ value: [new Sequence({ value: [essCertIdV2] })] })],
  })
}

/** Each certificate's DER, encoded once: pkijs re-parses and re-encodes a certificate every time it is serialized. */
const certificateDer = new WeakMap<Certificate, Uint8Array>()

function derOf(certificate: Certificate): Uint8Array {
  let der = certificateDer.get(certificate)
  if (!der) {
    der = new Uint8Array(certificate.toSchema(true).toBER(false))
    certificateDer.set(certificate, der)
  }
  return der
}

/** The certificate as it is, that serializes as its DER (still a Certificate to pkijs, which picks its encoding by class). */
function encodedOnce(certificate: Certificate): Certificate {
  const der = derOf(certificate)
  return Object.assign(Object.create(certificate) as Certificate, { toSchema: () => new EncodedDer({ data: der }) })
}

/** DER encoded already, written as it is: asn1js's RawData alone is left out where a constructed value is written. */
class EncodedDer extends RawData {
  override toBER(sizeOnly?: boolean, writer?: { write(buffer: ArrayBuffer): void }): ArrayBuffer {
    const der = super.toBER(sizeOnly)
    if (!writer) return der
    writer.write(der)
    return new ArrayBuffer(0)
  }
}
