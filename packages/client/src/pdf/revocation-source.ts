// Where a signer's (or a time-stamping authority's) certificate status comes from when a file gains its validation
// data: the OCSP responder its certificate names (RFC 6960 over HTTP), else its CRL. A certificate of the service's
// own CA that names no responder (the development TSA's) is asked at the service's responder. Every fetch has a
// timeout and a size limit, and a failure is an answer ("none"), never a console message: the DSS then says what it
// could, and the checker what is missing.
import { fromBER } from 'asn1js'
import { Certificate, InfoAccess, OCSPRequest } from 'pkijs'
import { buffer, bytesEqual } from './cms/der.ts'

export interface RevocationSourceOptions {
  /** The service's OCSP responder (`/api/info`'s `pdfSigning.ocspUrl`), for its CA's certificates that name none. */
  serviceOcspUrl?: string
  /** The service's CA certificates (DER): the issuers whose certificates may be asked at serviceOcspUrl. */
  serviceCertificates?: readonly Uint8Array[]
  /** Longest wait for one answer; default 10 s. */
  timeoutMs?: number
  fetch?: typeof fetch
}

/** @libpdf/core's RevocationProvider: DER in, DER (or null) out. */
export interface RevocationSource {
  getOCSP(certificate: Uint8Array, issuer: Uint8Array): Promise<Uint8Array | null>
  getCRL(certificate: Uint8Array): Promise<Uint8Array | null>
}

/** A CRL of a large CA runs to megabytes; an OCSP response to a few kilobytes. */
const MAX_CRL_BYTES = 8 * 1024 * 1024
const MAX_OCSP_BYTES = 64 * 1024
const OID = {
  ocsp: '1.3.6.1.5.5.7.48.1',
  authorityInfoAccess: '1.3.6.1.5.5.7.1.1',
  crlDistributionPoints: '2.5.29.31',
} as const

export function revocationSource(options: RevocationSourceOptions = {}): RevocationSource {
  const fetchFn = options.fetch ?? globalThis.fetch
  const timeoutMs = options.timeoutMs ?? 10_000
  const get = async (url: string, init: RequestInit, limit: number): Promise<Uint8Array | null> => {
    try {
      const response = await fetchFn(url, { ...init, signal: AbortSignal.timeout(timeoutMs), redirect: 'follow' })
      if (!response.ok) return null
      const declared = Number(response.headers.get('content-length') ?? 0)
      if (declared > limit) return null
      const body = new Uint8Array(await response.arrayBuffer())
      return body.length > 0 && body.length <= limit ? body : null
    } catch {
      return null
    }
  }
  return {
    async getOCSP(certificateDer, issuerDer) {
      const certificate = parse(certificateDer)
      const issuer = parse(issuerDer)
      if (!certificate || !issuer) return null
      const fromService = (options.serviceCertificates ?? []).some((der) => bytesEqual(der, issuerDer))
      const url = httpUrls(accessLocations(certificate))[0] ?? (fromService ? options.serviceOcspUrl : undefined)
      if (!url) return null
      const request = new OCSPRequest()
      await request.createForCertificate(certificate, { hashAlgorithm: 'SHA-1', issuerCertificate: issuer })
      return get(
        url,
        {
          method: 'POST',
          headers: { 'content-type': 'application/ocsp-request', accept: 'application/ocsp-response' },
          body: new Uint8Array(request.toSchema(true).toBER(false)),
        },
        MAX_OCSP_BYTES,
      )
    },
    async getCRL(certificateDer) {
      const certificate = parse(certificateDer)
      if (!certificate) return null
      for (const url of httpUrls(distributionPoints(certificate))) {
        const crl = await get(url, { method: 'GET' }, MAX_CRL_BYTES)
        if (crl) return crl
      }
      return null
    },
  }
}

function parse(der: Uint8Array): Certificate | undefined {
  try {
    const asn1 = fromBER(buffer(der))
    return asn1.offset === -1 ? undefined : new Certificate({ schema: asn1.result })
  } catch {
    return undefined
  }
}

const httpUrls = (urls: string[]) => urls.filter((url) => /^https?:\/\//i.test(url))

/** The OCSP responders the certificate's Authority Information Access names. */
function accessLocations(certificate: Certificate): string[] {
  const extension = certificate.extensions?.find((e) => e.extnID === OID.authorityInfoAccess)
  const access = extension?.parsedValue as InfoAccess | undefined
  if (!(access instanceof InfoAccess)) return []
  return access.accessDescriptions
    .filter((description) => description.accessMethod === OID.ocsp && description.accessLocation.type === 6)
    .map((description) => String(description.accessLocation.value))
}

/** The URLs of the certificate's CRL distribution points. */
function distributionPoints(certificate: Certificate): string[] {
  const extension = certificate.extensions?.find((e) => e.extnID === OID.crlDistributionPoints)
  const points = (extension?.parsedValue as { distributionPoints?: { distributionPoint?: unknown }[] } | undefined)
    ?.distributionPoints
  const urls: string[] = []
  for (const point of points ?? []) {
    const names = point.distributionPoint
    if (!Array.isArray(names)) continue
    for (const name of names as { type: number; value: unknown }[]) {
      if (name.type === 6) urls.push(String(name.value))
    }
  }
  return urls
}
