// The service's attestation of who anchored a signature, and the one decision every verifier (the page, the CLI)
// makes with it: does the decrypted payload's identity match what the service attests?
//
// identityCommitment = "0x" + hex(SHA-256(UTF-8(lower-case(e-mail)) ‖ the payload's 32 salt bytes)). The salt keeps it
// safe from dictionary guessing by anyone holding only the transaction hash. Name, company and position are never
// attested: the service does not know them.

import { TRUST_ANCHORS, type TrustAnchor } from './field-rules.ts'
import { fromHex, isHex, LOWER_HEX_HASH, toHex } from './hex.ts'

/** What the service attests about the account that relayed an anchor. */
export interface IdentityAttestation {
  /** How the account was signed in when it relayed the anchor. */
  trust: TrustAnchor
  verified: boolean
  /** `0x` + 64 lower-case hex characters. */
  identityCommitment: string
}

/**
 * `attested`: the payload's e-mail (and its `s.tr`/`s.v`, where present) are what the service attests;
 * `mismatch`: an attestation exists and something differs, so the payload's identity is a claim the service denies;
 * `claimed`: no attestation (an anchor relayed by an older client), so the identity is the signer app's word alone.
 */
export type IdentityState = 'attested' | 'mismatch' | 'claimed'

/** Which part of the payload's identity differs from the attestation. */
export type IdentityMismatch = 'email' | 'trust' | 'verified'

export interface IdentityDecision {
  state: IdentityState
  /** Empty unless `state` is `mismatch`. */
  mismatches: IdentityMismatch[]
  attestation: IdentityAttestation | null
}

/** The payload fields the decision reads (an `AnchorPayload` has them). */
export interface AttestedIdentityInput {
  s: { e: string; tr?: TrustAnchor; v?: boolean }
  salt: string
}

/** The commitment to `email` under `saltHex` (64 hex characters, either case). */
export async function identityCommitment(email: string, saltHex: string): Promise<string> {
  if (!isHex(saltHex, 64)) throw new TypeError('salt must be 64 hex characters')
  const emailBytes = new TextEncoder().encode(email.toLowerCase())
  const input = new Uint8Array(emailBytes.length + 32)
  input.set(emailBytes)
  input.set(fromHex(saltHex, 'salt'), emailBytes.length)
  return `0x${toHex(new Uint8Array(await crypto.subtle.digest('SHA-256', input)))}`
}

/** The verifiers' one rule: see `IdentityState`. */
export async function decideIdentity(
  payload: AttestedIdentityInput,
  attestation: IdentityAttestation | null,
): Promise<IdentityDecision> {
  if (attestation === null) return { state: 'claimed', mismatches: [], attestation }
  const mismatches: IdentityMismatch[] = []
  if ((await identityCommitment(payload.s.e, payload.salt)) !== attestation.identityCommitment.toLowerCase()) {
    mismatches.push('email')
  }
  if (payload.s.tr !== undefined && payload.s.tr !== attestation.trust) mismatches.push('trust')
  if (payload.s.v !== undefined && payload.s.v !== attestation.verified) mismatches.push('verified')
  return { state: mismatches.length === 0 ? 'attested' : 'mismatch', mismatches, attestation }
}

/**
 * Reads an `attestation` value of a verify answer: the attestation, null for none (or absent, as from a service that
 * predates attestations), undefined when it is there but malformed.
 */
export function parseIdentityAttestation(value: unknown): IdentityAttestation | null | undefined {
  if (value === null || value === undefined) return null
  if (typeof value !== 'object' || Array.isArray(value)) return undefined
  const { trust, verified, identityCommitment } = value as Record<string, unknown>
  if (
    !TRUST_ANCHORS.includes(trust as TrustAnchor) ||
    typeof verified !== 'boolean' ||
    typeof identityCommitment !== 'string' ||
    !LOWER_HEX_HASH.test(identityCommitment.toLowerCase())
  ) {
    return undefined
  }
  return { trust: trust as TrustAnchor, verified, identityCommitment: identityCommitment.toLowerCase() }
}
