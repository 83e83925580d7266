// The PKCE hand-off of the Google and Microsoft sign-in (RFC 7636, S256): the app makes a verifier and its
// challenge, opens the provider's sign-in with the challenge, receives `{app_scheme}://auth/callback?code=...` and
// exchanges the code with the verifier (AnchorClient.exchange). Whoever only saw the deep link cannot use the code.

import { toBase64Url } from '../formats/base64url.ts'

export interface PkcePair {
  /** Kept by the app until the exchange; 43 base64url characters (32 random bytes). */
  verifier: string
  /** base64url(SHA-256(verifier)), sent as `code_challenge`. */
  challenge: string
}

export async function createPkcePair(): Promise<PkcePair> {
  const verifier = toBase64Url(crypto.getRandomValues(new Uint8Array(32)))
  const digest = await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier))
  return { verifier, challenge: toBase64Url(new Uint8Array(digest)) }
}
