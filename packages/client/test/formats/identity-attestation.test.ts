// The identity commitment against independently computed vectors (test/vectors/identity-commitment.json, made with
// Python's hashlib and cross-checked with openssl), and the one decision every verifier makes, state by state.

import { describe, expect, it } from 'vitest'
import {
  decideIdentity,
  type IdentityAttestation,
  identityCommitment,
  parseIdentityAttestation,
} from '../../src/formats/identity-attestation.ts'
import vectors from '../vectors/identity-commitment.json' with { type: 'json' }

const SALT = '51c76b7890a05aabbda25a5b119300938a4e407a7329c0190abdc35ea5bf51c2'

describe('vectors: identity commitment', () => {
  it('covers three commitments', () => {
    expect(vectors.commitments).toHaveLength(3)
  })

  it.each(vectors.commitments.map((v) => [v.name, v] as const))('%s', async (_, vector) => {
    expect(await identityCommitment(vector.email, vector.saltHex)).toBe(vector.identityCommitment)
  })

  it('refuses a salt that is not 32 bytes of hex', async () => {
    await expect(identityCommitment('ada@example.com', SALT.slice(2))).rejects.toThrow('64 hex')
    await expect(identityCommitment('ada@example.com', `${SALT.slice(2)}zz`)).rejects.toThrow('64 hex')
  })
})

describe('decideIdentity', () => {
  // The service's attestation of mallory, who signed in with an e-mail code.
  let mallory: IdentityAttestation
  const payload = (e: string, tr?: 'email' | 'google' | 'microsoft', v?: boolean) => ({
    s: { e, ...(tr && { tr }), ...(v !== undefined && { v }) },
    salt: SALT,
  })

  it('attested: the honest payload, e-mail in any case', async () => {
    mallory = {
      trust: 'email',
      verified: true,
      identityCommitment: await identityCommitment('mallory@example.com', SALT),
    }
    expect(await decideIdentity(payload('Mallory@Example.com', 'email', true), mallory)).toEqual({
      state: 'attested',
      mismatches: [],
      attestation: mallory,
    })
    // s.tr and s.v are optional in a payload: absent, there is nothing to differ.
    expect((await decideIdentity(payload('mallory@example.com'), mallory)).state).toBe('attested')
  })

  it('mismatch: a forged e-mail', async () => {
    expect(await decideIdentity(payload('ceo@bigcorp.example', 'email', true), mallory)).toMatchObject({
      state: 'mismatch',
      mismatches: ['email'],
    })
  })

  it('mismatch: a forged provider', async () => {
    expect(await decideIdentity(payload('mallory@example.com', 'google', true), mallory)).toMatchObject({
      state: 'mismatch',
      mismatches: ['trust'],
    })
  })

  it('mismatch: a forged verified flag', async () => {
    const unverified = { ...mallory, verified: false }
    expect(await decideIdentity(payload('mallory@example.com', 'email', true), unverified)).toMatchObject({
      state: 'mismatch',
      mismatches: ['verified'],
    })
  })

  it('mismatch: everything forged at once, every part named', async () => {
    expect(await decideIdentity(payload('ceo@bigcorp.example', 'google', false), mallory)).toMatchObject({
      state: 'mismatch',
      mismatches: ['email', 'trust', 'verified'],
    })
  })

  it('mismatch: the same e-mail under another salt (a commitment copied from another anchor)', async () => {
    const other = { ...payload('mallory@example.com', 'email', true), salt: 'ab'.repeat(32) }
    expect((await decideIdentity(other, mallory)).state).toBe('mismatch')
  })

  it('claimed: no attestation (relayed without a salt)', async () => {
    expect(await decideIdentity(payload('ceo@bigcorp.example', 'google', true), null)).toEqual({
      state: 'claimed',
      mismatches: [],
      attestation: null,
    })
  })
})

describe('parseIdentityAttestation', () => {
  const commitment = `0x${'AB'.repeat(32)}`

  it('reads a well-formed attestation, commitment in lower case', () => {
    expect(parseIdentityAttestation({ trust: 'google', verified: true, identityCommitment: commitment })).toEqual({
      trust: 'google',
      verified: true,
      identityCommitment: commitment.toLowerCase(),
    })
  })

  it('reads null and an absent value (a service before attestations) as none', () => {
    expect(parseIdentityAttestation(null)).toBeNull()
    expect(parseIdentityAttestation(undefined)).toBeNull()
  })

  it.each([
    ['an unknown provider', { trust: 'github', verified: true, identityCommitment: commitment }],
    ['a string verified', { trust: 'email', verified: 'true', identityCommitment: commitment }],
    ['a short commitment', { trust: 'email', verified: true, identityCommitment: '0xabcd' }],
    ['an array', []],
    ['a string', 'attested'],
  ])('refuses %s', (_, value) => {
    expect(parseIdentityAttestation(value)).toBeUndefined()
  })
})
