// What the page says about who signed: attested by this service, only claimed by the signer's application, or a claim
// the service's attestation contradicts. A mismatch must never read as success, so its words never say "verified by
// the provider" about the claim; they state what the service attests instead.
import type { AnchorPayload, IdentityAttestation, IdentityDecision } from '@docanchor/client'
import { type Phrase, untrusted } from './dom.ts'

type Trust = IdentityAttestation['trust']

/** What a signature states about its signer's identity: the payload's `s` (QR page), or a PDF's metadata entry. */
export type StatedIdentity = Pick<AnchorPayload['s'], 'e' | 'tr' | 'v'>

/** "Signed in with …" */
const SIGN_IN_LABELS: Record<Trust, string> = {
  email: 'a sign-in code sent to this e-mail address',
  google: 'a Google account',
  microsoft: 'a Microsoft account',
}

/** "an account signed in with …", for the account the service attests (whose address the page does not know). */
const ATTESTED_SIGN_IN: Record<Trust, string> = {
  email: 'an e-mail sign-in code',
  google: 'a Google account',
  microsoft: 'a Microsoft account',
}

const PROVIDER_NAMES: Record<Trust, string> = {
  email: 'e-mail sign-in',
  google: 'Google account',
  microsoft: 'Microsoft account',
}

export const NOT_ATTESTED_NOTE = 'Name, company and position are as the signer stated them: no one attests them.'

function claimedSignIn(signer: Pick<StatedIdentity, 'tr' | 'v'>): string {
  if (signer.tr === undefined) return 'Not stated'
  const how = SIGN_IN_LABELS[signer.tr] ?? signer.tr
  if (signer.v === undefined) return `Signed in with ${how}`
  return `Signed in with ${how}; identity ${signer.v ? 'verified' : 'not verified'} by the provider`
}

/** What the service attests, in words: "an account signed in with a Google account, whose identity …". */
export function attestedAccount(attestation: IdentityAttestation): string {
  const verified = attestation.verified ? '' : ', whose identity the provider did not check'
  return `an account signed in with ${ATTESTED_SIGN_IN[attestation.trust]}${verified}`
}

/** The "Identity" fact of the signer section. */
export function identityFact(signer: StatedIdentity, identity: IdentityDecision): string {
  const { attestation } = identity
  switch (identity.state) {
    case 'attested':
      return `Attested by this service: ${claimedSignIn({ tr: attestation!.trust, v: attestation!.verified })}`
    case 'claimed':
      return `As stated by the signer’s application, not attested by this service: ${claimedSignIn(signer)}`
    case 'mismatch':
      return `Not confirmed: this service attests that ${attestedAccount(attestation!)} anchored this signature`
  }
}

/** What the page says of a signature's identity, whatever its state: the QR page's words, for the PDF drop too. */
export function identityVerdict(signer: StatedIdentity, identity: IdentityDecision): Phrase {
  return identity.state === 'mismatch' ? mismatchSentence(signer, identity) : identitySentence(signer, identity)
}

/** The verdict's sentence on identity for an attested or claimed signature. */
export function identitySentence(signer: StatedIdentity, identity: IdentityDecision): Phrase {
  if (identity.state === 'attested') {
    return [
      'This service attests that the signature was anchored by the account ',
      untrusted(signer.e),
      `, signed in with ${ATTESTED_SIGN_IN[identity.attestation!.trust]}.`,
    ]
  }
  return [
    'Who signed is as stated by the signer’s application: this signature carries no identity attestation by the service.',
  ]
}

/** The warning of a mismatch: what the details claim, and what the service attests instead. */
export function mismatchSentence(s: StatedIdentity, identity: IdentityDecision): Phrase {
  const claimed: Phrase = s.tr === undefined ? [untrusted(s.e)] : [untrusted(s.e), `’s ${PROVIDER_NAMES[s.tr]}`]
  const byWhom: Phrase = identity.mismatches.includes('email')
    ? [', not by ', ...claimed]
    : identity.mismatches.includes('trust')
      ? [`, not with ${s.tr === undefined ? 'the stated sign-in' : ATTESTED_SIGN_IN[s.tr]}`]
      : []
  const checked =
    identity.mismatches.includes('verified') && s.v !== undefined
      ? ` The details claim the provider ${s.v ? 'checked' : 'did not check'} the signer’s identity; the service attests otherwise.`
      : ''
  return [
    `This service attests that the signature was anchored by ${attestedAccount(identity.attestation!)}`,
    ...byWhom,
    `.${checked} Do not rely on who this signature says signed.`,
  ]
}
