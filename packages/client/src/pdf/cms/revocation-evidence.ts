// What the validation data a file carries (its DSS: OCSP responses and CRLs) says of one certificate: revoked, and
// since when, or good as of when. Only evidence its issuer signed counts (the CA itself, or an OCSP responder the
// CA certified for that purpose); everything else in the DSS is ignored, as a forged "good" must not help a
// revoked signer. Offline: nothing is fetched.
import { fromBER, GeneralizedTime } from 'asn1js'
import {
  BasicOCSPResponse,
  CertID,
  type Certificate,
  CertificateRevocationList,
  getCrypto,
  OCSPResponse,
  type SingleResponse,
} from 'pkijs'
import type { ValidationData } from '../document-security-store.ts'
import { buffer, OID } from './der.ts'

export type RevocationEvidence =
  /** A response or list signed by the issuer says it was not revoked as of `at`. */
  | { state: 'good'; source: 'OCSP' | 'CRL'; at: Date }
  | { state: 'revoked'; source: 'OCSP' | 'CRL'; revokedAt: Date }
  /** The file holds nothing its issuer signed about it. */
  | { state: 'unknown' }

const OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1'
const OCSP_SIGNING = '1.3.6.1.5.5.7.3.9'
const CERT_ID_HASHES: Record<string, string> = { '1.3.14.3.2.26': 'SHA-1', [OID.sha256]: 'SHA-256' }

/**
 * Each DSS item parsed once per file, and its signature checked once per issuer: a file's signatures share its DSS,
 * and a hostile one may list hundreds of items.
 */
interface ParsedItems {
  ocsp: (BasicOCSPResponse | undefined)[]
  crls: (CertificateRevocationList | undefined)[]
  signedBy: Map<string, Promise<boolean>>
}
const parsedItems = new WeakMap<ValidationData, ParsedItems>()

function parsedOf(data: ValidationData): ParsedItems {
  let parsed = parsedItems.get(data)
  if (!parsed) {
    parsed = { ocsp: data.ocspResponses.map(basicResponse), crls: data.crls.map(revocationList), signedBy: new Map() }
    parsedItems.set(data, parsed)
  }
  return parsed
}

/** What `data` says of `certificate`, issued by `issuer`: a revocation wins over any number of "good" answers. */
export async function revocationEvidence(
  certificate: Certificate,
  issuer: Certificate,
  data: ValidationData,
): Promise<RevocationEvidence> {
  const parsed = parsedOf(data)
  const issuerKey = bytesKey(new Uint8Array(issuer.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView))
  const signed = (kind: string, index: number, check: () => Promise<boolean>) => {
    const key = `${kind}${index}:${issuerKey}`
    let verdict = parsed.signedBy.get(key)
    if (!verdict) {
      verdict = check().catch(() => false)
      parsed.signedBy.set(key, verdict)
    }
    return verdict
  }
  const found: RevocationEvidence[] = []
  for (const [index, basic] of parsed.ocsp.entries()) {
    if (!basic) continue
    if (!(await signed('ocsp', index, () => signedByIssuerOrResponder(basic, issuer)))) continue
    const evidence = await fromOcsp(basic, certificate, issuer).catch(() => undefined)
    if (evidence) found.push(evidence)
  }
  for (const [index, crl] of parsed.crls.entries()) {
    if (!crl?.issuer.isEqual(issuer.subject)) continue
    if (!(await signed('crl', index, () => crl.verify({ issuerCertificate: issuer })))) continue
    found.push(fromCrl(crl, certificate))
  }
  const revoked = found.filter((evidence) => evidence.state === 'revoked')
  if (revoked.length > 0) return revoked.sort((a, b) => a.revokedAt.getTime() - b.revokedAt.getTime())[0]!
  const good = found.filter((evidence) => evidence.state === 'good')
  return good.sort((a, b) => b.at.getTime() - a.at.getTime())[0] ?? { state: 'unknown' }
}

/** A successful OCSP response's BasicOCSPResponse; undefined for anything else. */
function basicResponse(der: Uint8Array): BasicOCSPResponse | undefined {
  try {
    const response = OCSPResponse.fromBER(buffer(der))
    const bytes = response.responseBytes
    if (response.responseStatus.valueBlock.valueDec !== 0 || bytes?.responseType !== OCSP_BASIC) return undefined
    return BasicOCSPResponse.fromBER(buffer(new Uint8Array(bytes.response.valueBlock.valueHexView)))
  } catch {
    return undefined
  }
}

function revocationList(der: Uint8Array): CertificateRevocationList | undefined {
  try {
    const parsed = fromBER(buffer(der))
    return parsed.offset === -1 ? undefined : new CertificateRevocationList({ schema: parsed.result })
  } catch {
    return undefined
  }
}

const bytesKey = (bytes: Uint8Array) => Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')

/** What a response its issuer signed says of `certificate`. */
async function fromOcsp(basic: BasicOCSPResponse, certificate: Certificate, issuer: Certificate) {
  for (const single of basic.tbsResponseData.responses) {
    if (!(await isFor(single, certificate, issuer))) continue
    const status = single.certStatus as { idBlock: { tagNumber: number }; valueBlock: { value?: unknown[] } }
    if (status.idBlock.tagNumber === 1) {
      // revoked [1] RevokedInfo: its first element is the revocation time.
      const time = status.valueBlock.value?.[0]
      const revokedAt = time instanceof GeneralizedTime ? time.toDate() : generalizedTimeOf(time)
      if (revokedAt) return { state: 'revoked' as const, source: 'OCSP' as const, revokedAt }
      return undefined
    }
    if (status.idBlock.tagNumber === 0)
      return { state: 'good' as const, source: 'OCSP' as const, at: single.thisUpdate }
  }
  return undefined
}

/** A revocation time pkijs left as raw bytes (an implicitly tagged GeneralizedTime). */
function generalizedTimeOf(value: unknown): Date | undefined {
  const view = (value as { valueBlock?: { valueHexView?: Uint8Array } } | undefined)?.valueBlock?.valueHexView
  if (!view) return undefined
  const time = new GeneralizedTime({ valueHex: new Uint8Array(view).buffer })
  return Number.isNaN(time.toDate().getTime()) ? undefined : time.toDate()
}

async function isFor(single: SingleResponse, certificate: Certificate, issuer: Certificate): Promise<boolean> {
  const hash = CERT_ID_HASHES[single.certID.hashAlgorithm.algorithmId]
  if (!hash) return false
  const expected = await CertID.create(certificate, { hashAlgorithm: hash, issuerCertificate: issuer })
  return expected.isEqual(single.certID)
}

/** Signed by the issuer itself, or by a responder the issuer certified for OCSP signing (RFC 6960, 4.2.2.2). */
async function signedByIssuerOrResponder(basic: BasicOCSPResponse, issuer: Certificate): Promise<boolean> {
  const engine = getCrypto(true)
  const responders = [issuer]
  for (const candidate of basic.certs ?? []) {
    const delegated = candidate.extensions?.some(
      (extension) =>
        extension.extnID === OID.extKeyUsage &&
        (extension.parsedValue as { keyPurposes?: string[] } | undefined)?.keyPurposes?.includes(OCSP_SIGNING),
    )
    if (delegated && candidate.issuer.isEqual(issuer.subject) && (await candidate.verify(issuer).catch(() => false))) {
      responders.push(candidate)
    }
  }
  for (const responder of responders) {
    const verified = await engine
      .verifyWithPublicKey(
        basic.tbsResponseData.tbsView as Uint8Array<ArrayBuffer>,
        basic.signature,
        responder.subjectPublicKeyInfo,
        basic.signatureAlgorithm,
      )
      .catch(() => false)
    if (verified) return true
  }
  return false
}

/** What a list its issuer signed says of `certificate`. */
function fromCrl(crl: CertificateRevocationList, certificate: Certificate): RevocationEvidence {
  const entry = crl.revokedCertificates?.find((revoked) => revoked.userCertificate.isEqual(certificate.serialNumber))
  if (entry) return { state: 'revoked' as const, source: 'CRL' as const, revokedAt: entry.revocationDate.value }
  return { state: 'good' as const, source: 'CRL' as const, at: crl.thisUpdate.value }
}
