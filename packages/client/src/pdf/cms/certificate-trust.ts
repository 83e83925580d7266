// Whether a certificate chains to one of the roots the verifier trusts (the service's from /api/info, pinned ones,
// or the system's), valid at a given time: pkijs's chain validation, with the certificates the CMS carries as the
// intermediates. No revocation data is fetched: the checks run offline, in a browser tab as in the CLI.
import { type Certificate, CertificateChainValidationEngine } from 'pkijs'

export interface Trust {
  trusted: boolean
  /** Why not, in a reader's words; absent when trusted. */
  reason?: string
}

export async function chainTrust(
  leaf: Certificate,
  carried: Certificate[],
  roots: Certificate[],
  at: Date,
): Promise<Trust> {
  if (roots.length === 0) return { trusted: false, reason: 'no trusted root was given to check it against' }
  // Only a root that issued one of the certificates at hand can end the chain: the engine, given the system's ~140
  // roots, spends its time on the others.
  const chain = [...carried.filter((certificate) => certificate !== leaf), leaf]
  const candidates = roots.filter((root) => chain.some((certificate) => certificate.issuer.isEqual(root.subject)))
  if (candidates.length === 0) return { trusted: false, reason: 'it does not chain to a trusted root' }
  const engine = new CertificateChainValidationEngine({
    certs: chain,
    trustedCerts: candidates,
    checkDate: at,
  })
  try {
    const result = await engine.verify()
    if (result.result) return { trusted: true }
    return { trusted: false, reason: untrustedReason(result.resultMessage) }
  } catch (error) {
    return { trusted: false, reason: untrustedReason((error as { resultMessage?: string }).resultMessage) }
  }
}

function untrustedReason(message: string | undefined): string {
  if (message && /validity|expired|not yet valid/i.test(message)) return 'a certificate was not valid at that time'
  return 'it does not chain to a trusted root'
}
