// Checks one PDF signature as readers do: its /ByteRange covers the whole file up to the end of the revision that
// made it, but for its own /Contents; its CMS signs those bytes (cms/cms-signature.ts); its certificate chains to a
// trusted root; its timestamp token, when it has one, verifies. The same code for the service's signatures and for
// any other product's, so that none is silently ignored.
import { fromBER } from 'asn1js'
import type { Certificate } from 'pkijs'
import type { AnchorReference } from './anchor-attribute.ts'
import { chainTrust } from './cms/certificate-trust.ts'
import { checkCmsSignature } from './cms/cms-signature.ts'
import { certificateOf } from './cms/der.ts'
import { revocationEvidence } from './cms/revocation-evidence.ts'
import { checkTimestampToken, type TimestampCheck } from './cms/timestamp-token.ts'
import type { ValidationData } from './document-security-store.ts'
import type { SignedPdf } from './read-signed-pdf.ts'
import type { PdfSignatureField } from './signature-fields.ts'
import { certificateEmail } from './signer-profile.ts'

export interface PdfSignatureCheck {
  /** The field's name; null when it has none or the file is encrypted. */
  name: string | null
  /** The revision that made the signature. */
  revision: number
  subFilter: string | null
  /** valid: intact and verified; invalid: broken; not checked: a kind of signature this checker does not read. */
  status: 'valid' | 'invalid' | 'not checked'
  /**
   * The signer's certificate chains to a root the verifier trusts (the system's, or ones it was given), valid when it
   * signed: what a reader says. Not the service's CA (`certifiedByService`), which no reader trusts unless added.
   */
  trusted: boolean
  /**
   * The signer's certificate was issued by the service's CA (the certificates its /api/info publishes), valid when it
   * signed: a signer the service certified.
   */
  certifiedByService: boolean
  /** The e-mail the signer's certificate names (its rfc822Name); null when it names none. */
  signerEmail: string | null
  /** The anchor the CMS's signed attributes name; null when they name none. */
  anchor: AnchorReference | null
  /** Why it is not trusted, in a reader's words; null when it is (or nothing could be checked). */
  trustProblem: string | null
  signer: { subject: string; commonName: string } | null
  /** The signature's timestamp (or, for a document timestamp, the timestamp itself). */
  timestamp: TimestampSummary | null
  /**
   * What the file's validation data (its DSS) says of the signer's certificate (of the authority's, for a document
   * timestamp): unknown when it holds nothing the issuer signed about it.
   */
  revocation: Revocation
  /**
   * How far the signature stands on its own over time (PAdES): B-B signed; B-T with a timestamp; B-LT with the
   * certificate's revocation status in the file; B-LTA covered by a later document timestamp as well.
   */
  level: 'B-B' | 'B-T' | 'B-LT' | 'B-LTA' | null
  problems: string[]
}

export interface TimestampSummary {
  time: string
  authority: string | null
  valid: boolean
  trusted: boolean
  /**
   * When the authority's certificate expires: a validator that checks the newest timestamp at its own date (iText's)
   * needs the file renewed (`anchor extend`) before then.
   */
  certificateNotAfter: string | null
}

/** A token's check as the report shows it; null when the token has no time. */
function timestampSummary(token: TimestampCheck | null): TimestampSummary | null {
  if (!token?.time) return null
  return {
    time: token.time.toISOString(),
    authority: token.authority,
    valid: token.valid,
    trusted: token.trusted,
    certificateNotAfter: token.certificate?.notAfter.value.toISOString() ?? null,
  }
}

export type Revocation =
  | { state: 'good'; source: 'OCSP' | 'CRL'; at: string }
  | { state: 'revoked'; source: 'OCSP' | 'CRL'; revokedAt: string }
  | { state: 'unknown' }

const CMS_KINDS = new Set(['ETSI.CAdES.detached', 'adbe.pkcs7.detached'])
const DOCUMENT_TIMESTAMP = 'ETSI.RFC3161'

export interface PdfSignatureTrust {
  /** Roots a signer's certificate may chain to. */
  roots: Certificate[]
  /** Roots a time-stamping authority's certificate may chain to: the signers' roots and the TSAs' own. */
  timestampRoots: Certificate[]
  /** The service's CA certificates (DER): a signer certificate one of them issued is a signer the service certified. */
  service: readonly Uint8Array[]
}

export async function checkPdfSignature(
  pdf: SignedPdf,
  field: PdfSignatureField,
  trust: PdfSignatureTrust,
): Promise<PdfSignatureCheck> {
  const { roots, timestampRoots } = trust
  const base = {
    name: field.name,
    revision: field.revision,
    subFilter: field.subFilter,
    certifiedByService: false,
    signerEmail: null,
    anchor: null,
    revocation: { state: 'unknown' } as Revocation,
    level: null,
  }
  const failed = (problem: string): PdfSignatureCheck => ({
    ...base,
    status: 'invalid',
    trusted: false,
    trustProblem: null,
    signer: null,
    timestamp: null,
    problems: [problem],
  })
  const kind = field.subFilter ?? ''
  if (!CMS_KINDS.has(kind) && kind !== DOCUMENT_TIMESTAMP) {
    return { ...failed(`a signature of kind ${kind || 'unknown'} is not checked here`), status: 'not checked' }
  }
  const range = signedRange(pdf, field)
  if (typeof range === 'string') return failed(range)
  const structureProblem = contentsProblem(field)
  if (structureProblem) return failed(structureProblem)
  const contents = field.contents!
  if (kind === DOCUMENT_TIMESTAMP) {
    const token = await checkTimestampToken(contents, { bytes: range }, timestampRoots)
    const revocation = await revocationOf(token.certificate, token.carried, pdf.validationData)
    if (revocation.state === 'revoked' && token.time && Date.parse(revocation.revokedAt) <= token.time.getTime()) {
      token.problems.push(`the time-stamping authority's certificate was revoked on ${revocation.revokedAt}, before`)
      token.valid = false
    }
    return {
      ...base,
      revocation,
      status: token.valid ? 'valid' : 'invalid',
      trusted: token.trusted,
      trustProblem: token.trusted ? null : 'the time-stamping authority is not trusted',
      signer: token.authority ? { subject: token.authority, commonName: token.authority } : null,
      timestamp: timestampSummary(token),
      problems: token.problems,
    }
  }
  const cms = await checkCmsSignature(contents, range, roots, timestampRoots)
  const { timestamp } = cms
  const made = cms.signer?.certificate
  const signerCertificate = made === undefined ? undefined : certificateOf(made)
  const revocation = await revocationOf(signerCertificate, cms.carried, pdf.validationData)
  const signedAt = timestamp?.valid ? timestamp.time : null
  if (revocation.state === 'revoked' && (!signedAt || Date.parse(revocation.revokedAt) <= signedAt.getTime())) {
    cms.problems.push(
      signedAt
        ? `its signer's certificate was revoked on ${revocation.revokedAt}, before it signed (${signedAt.toISOString()})`
        : `its signer's certificate was revoked on ${revocation.revokedAt}, and no timestamp shows it signed before`,
    )
    cms.valid = false
  }
  const archived = pdf.pdfSignatures.some(
    (other) => other.subFilter === DOCUMENT_TIMESTAMP && other.revision > field.revision,
  )
  const longTerm = revocation.state === 'unknown' ? 'B-T' : archived ? 'B-LTA' : 'B-LT'
  return {
    ...base,
    revocation,
    level: timestamp?.valid ? longTerm : 'B-B',
    certifiedByService:
      signerCertificate !== undefined &&
      (await certifiedBy(signerCertificate, trust.service, timestamp?.time ?? new Date())),
    signerEmail: signerCertificate ? certificateEmail(signerCertificate) : null,
    anchor: cms.anchor,
    status: cms.valid ? 'valid' : 'invalid',
    trusted: cms.trusted,
    trustProblem: cms.trustProblem,
    signer: cms.signer && { subject: cms.signer.subject, commonName: cms.signer.commonName },
    timestamp: timestampSummary(timestamp),
    problems: cms.problems,
  }
}

/**
 * What makes a signature's structure wrong before any cryptography is checked: a /ByteRange that is not exactly the
 * revision but its own /Contents, a /Contents that is not one signature, a field that gained it later. Null when
 * there is nothing wrong (or it is of a kind this checker does not read).
 */
export function signatureStructureProblem(pdf: SignedPdf, field: PdfSignatureField): string | null {
  const kind = field.subFilter ?? ''
  if (!CMS_KINDS.has(kind) && kind !== DOCUMENT_TIMESTAMP) return null
  const range = signedRange(pdf, field)
  return typeof range === 'string' ? range : contentsProblem(field)
}

function contentsProblem(field: PdfSignatureField): string | null {
  if (!field.contents) return 'it has no /Contents'
  const problem = onlySignatureIn(field.contents)
  if (problem) return problem
  if (!field.madeInItsRevision) {
    return `its field points at it only in a later revision than the one that made it (revision ${field.revision})`
  }
  return null
}

/**
 * The bytes the signature's /ByteRange names, concatenated; a problem when the range is not [0 a b c] around its
 * own /Contents, or does not reach the end of the revision that made the signature (which would leave bytes of that
 * revision unsigned).
 */
function signedRange(pdf: SignedPdf, field: PdfSignatureField): Uint8Array | string {
  const { bytes } = pdf
  const range = field.byteRange
  if (!range) return 'its /ByteRange is not four numbers'
  const [start, firstLength, second, secondLength] = range as [number, number, number, number]
  const end = second + secondLength
  if (start !== 0 || firstLength <= 0 || second <= firstLength || secondLength < 0 || end > bytes.length) {
    return 'its /ByteRange does not describe this file'
  }
  if (bytes[firstLength] !== 0x3c || bytes[second - 1] !== 0x3e || !isHex(bytes, firstLength + 1, second - 1)) {
    return 'its /ByteRange leaves out more than its own /Contents'
  }
  const span = field.dictionarySpan
  if (!span) return 'its signature dictionary is not an object of its own, so no /ByteRange can leave out its /Contents'
  if (firstLength <= span[0] || second > span[1]) {
    return 'its /ByteRange leaves out bytes outside its own signature dictionary'
  }
  const revisionEnd = pdf.revisions[field.revision]?.end ?? bytes.length
  // The revision's end includes the end-of-line after %%EOF, which some signers leave outside the range.
  if (end > revisionEnd || revisionEnd - end > 2) {
    return `it covers the file up to byte ${end}, not up to the end of its revision (byte ${revisionEnd})`
  }
  const signed = new Uint8Array(firstLength + secondLength)
  signed.set(bytes.subarray(0, firstLength))
  signed.set(bytes.subarray(second, end), firstLength)
  return signed
}

/** Bytes `from` to `to` are hex digits, as a /Contents string written to be left out of a /ByteRange is. */
function isHex(bytes: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const byte = bytes[i]!
    const digit = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x46) || (byte >= 0x61 && byte <= 0x66)
    if (!digit) return false
  }
  return true
}

/**
 * /Contents holds one DER structure (the CMS or the timestamp token) and zero padding after it, nothing else: bytes
 * past the structure would be signed by nobody, and an empty one is no signature (universal signature forgery).
 */
function onlySignatureIn(contents: Uint8Array): string | null {
  if (contents.length === 0 || contents.every((byte) => byte === 0)) return 'its /Contents is empty'
  const length = derLength(contents)
  if (length === null || length > contents.length) return 'its /Contents is not a signature (not DER or BER)'
  for (let i = length; i < contents.length; i++) {
    if (contents[i] !== 0) return 'its /Contents holds more than its signature'
  }
  return null
}

/** The length of the (BER) SEQUENCE at the start of `bytes`, header included; null when it is not one. */
function derLength(bytes: Uint8Array): number | null {
  if (bytes[0] !== 0x30) return null
  // Indefinite lengths (poppler writes them) end only where their contents do: asn1js reads them.
  const { offset, result } = fromBER(bytes)
  return offset < 0 || result.error ? null : offset
}

/** What the file's validation data says of `certificate`, whose issuer is among `carried` or the DSS's certificates. */
async function revocationOf(
  certificate: Certificate | undefined,
  carried: Certificate[],
  data: ValidationData,
): Promise<Revocation> {
  if (!certificate) return { state: 'unknown' }
  const candidates = [...carried, ...data.certificates.flatMap((der) => parsedCertificate(der) ?? [])]
  for (const issuer of candidates) {
    if (!certificate.issuer.isEqual(issuer.subject) || !(await certificate.verify(issuer).catch(() => false))) continue
    const evidence = await revocationEvidence(certificate, issuer, data)
    if (evidence.state === 'revoked') {
      return { state: 'revoked', source: evidence.source, revokedAt: evidence.revokedAt.toISOString() }
    }
    if (evidence.state === 'good') return { state: 'good', source: evidence.source, at: evidence.at.toISOString() }
  }
  return { state: 'unknown' }
}

function parsedCertificate(der: Uint8Array): Certificate | undefined {
  try {
    return certificateOf(der)
  } catch {
    return undefined
  }
}

/** Whether `signer` was issued by one of the service's CA certificates, and valid at `at`. */
async function certifiedBy(signer: Certificate, service: readonly Uint8Array[], at: Date): Promise<boolean> {
  const issuers = service.map(certificateOf)
  if (issuers.length === 0) return false
  return (await chainTrust(signer, issuers, issuers, at)).trusted
}
