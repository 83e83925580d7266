// What a signer certificate of the service's CA says, and how a verifier reads its e-mail (rfc822Name) back: the
// sign-in provider that verified it is the certificate policy, the key purposes are fixed. The
// object identifiers hang below an arc of 2.999, which ITU-T keeps for uses nobody registers: a UUID arc (2.25) would
// need no registry either, but asn1js reads an arc beyond 2^53 back wrong and then writes it wrong, which breaks every
// signature over it. A deployment with a Private Enterprise Number can move them under it.
import type { AltName, Certificate } from 'pkijs'
import type { TrustAnchor } from '../formats/field-rules.ts'

export const PROJECT_ARC = '2.999.6362'

/** The anchor a signature belongs to, as a signed attribute (anchor-attribute.ts). */
export const ANCHOR_ATTRIBUTE_OID = `${PROJECT_ARC}.1`

/** The certificate policy of a signer certificate: which sign-in verified its e-mail. */
export const SIGNER_POLICY_OID: Record<TrustAnchor, string> = {
  email: `${PROJECT_ARC}.2.1`,
  google: `${PROJECT_ARC}.2.2`,
  microsoft: `${PROJECT_ARC}.2.3`,
}

export const SIGNER_EKU = { documentSigning: '1.3.6.1.5.5.7.3.36', emailProtection: '1.3.6.1.5.5.7.3.4' } as const

const ID_SUBJECT_ALT_NAME = '2.5.29.17'

/** The certificate's rfc822Name (lower case); null when it has none. */
export function certificateEmail(certificate: Certificate): string | null {
  const names = certificate.extensions?.find((e) => e.extnID === ID_SUBJECT_ALT_NAME)?.parsedValue as
    | AltName
    | undefined
  const name = names?.altNames?.find((candidate) => candidate.type === 1)
  return typeof name?.value === 'string' ? name.value.toLowerCase() : null
}
