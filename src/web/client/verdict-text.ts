// What each outcome says to a person: a heading that is the verdict, a sentence on what it means and what to do,
// a tone for colour (never the only cue: the heading says it in words) and whether it interrupts screen readers.
import { type Phrase, untrusted } from './dom.ts'
import { identitySentence, mismatchSentence } from './identity-text.ts'
import { formatLocal } from './time-format.ts'
import type { Verdict } from './verify-flow.ts'

export type Tone = 'ok' | 'warn' | 'bad'

export interface VerdictText {
  tone: Tone
  /** `alert` interrupts a screen reader; `status` waits its turn. Only a verified signature is good news. */
  role: 'status' | 'alert'
  heading: string
  /** What a signer's details say is kept apart as untrusted text (dom.ts), here and in the title. */
  body: Phrase
  /** Offer a retry: the failure is on the way, not in the signature. */
  retry: boolean
  /** Short form for the document title. */
  title: Phrase
}

/**
 * What a verified QR code cannot tell: the sentence before says the details match the anchor, but whether a PDF still
 * shows what was signed (no later revision painted over it) only the file can tell.
 */
const ONLY_THE_FILE_CAN_TELL =
  'The blockchain holds the anchor, not the document: only the signed PDF itself shows whether its content is the one that was signed. Drop the file below to check it.'

export function verdictText(verdict: Verdict): VerdictText {
  switch (verdict.kind) {
    case 'verified':
      if (verdict.identity.state === 'mismatch') {
        // The record is intact, but the identity in it is one the service's attestation contradicts: no success.
        return {
          tone: 'bad',
          role: 'alert',
          heading: 'Warning: the signer’s identity does not match what the service attests',
          body: mismatchSentence(verdict.payload.s, verdict.identity),
          retry: false,
          title: ['Warning: signer identity not confirmed'],
        }
      }
      return {
        tone: 'ok',
        role: 'status',
        heading: 'Signature verified',
        body: [
          untrusted(verdict.payload.s.n),
          ` signed this document on ${formatLocal(verdict.payload.ts)}. Their details, decrypted on this device, match the record on the blockchain. `,
          ...identitySentence(verdict.payload.s, verdict.identity),
          ` ${ONLY_THE_FILE_CAN_TELL}`,
        ],
        retry: false,
        title: ['Verified: signed by ', untrusted(verdict.payload.s.n)],
      }
    case 'tampered':
      return verdict.reason === 'hash-mismatch'
        ? {
            tone: 'bad',
            role: 'alert',
            heading: 'Warning: the signer’s details do not match the blockchain',
            body: [
              'The details stored for this signature are not the ones recorded on the blockchain when the document was signed. They may have been altered. Do not rely on this signature.',
            ],
            retry: false,
            title: ['Warning: details do not match'],
          }
        : {
            tone: 'bad',
            role: 'alert',
            heading: 'Warning: the verification service’s answer does not add up',
            body: [
              'The chain of signatures it returned does not link up to this transaction. Do not rely on this signature; check the transaction on the blockchain yourself or try again later.',
            ],
            retry: true,
            title: ['Warning: inconsistent answer'],
          }
    case 'key-mismatch':
      return {
        tone: 'bad',
        role: 'alert',
        heading: 'The signer’s details could not be opened',
        body: [
          'The key in this link does not open the details stored for this signature. The link may be incomplete or mistyped: scan the QR code on the document again. If the complete link still fails, the stored details may have been altered, and this signature should not be relied on.',
        ],
        retry: false,
        title: ['Details could not be opened'],
      }
    case 'missing-key':
      return {
        tone: 'warn',
        role: 'alert',
        heading: verdict.malformed ? 'The key in this link is damaged' : 'This link has no key',
        body: [
          'The signer’s details are encrypted. Their key is the part of the QR code’s link after the # sign, and it never leaves your device. Scan the QR code on the document again, or open the complete link. The blockchain record below shows when the document was signed, but not by whom.',
        ],
        retry: false,
        title: ['Key missing from the link'],
      }
    case 'no-details':
      return {
        tone: 'warn',
        role: 'alert',
        heading: 'Recorded on the blockchain, but no signer details are held',
        body: [
          'This signature is on the blockchain, but this verification service holds no encrypted details for it, so it cannot say who signed. Check the signed PDF below: it carries the details itself.',
        ],
        retry: false,
        title: ['No signer details held'],
      }
    case 'erased':
      return {
        tone: 'warn',
        role: 'alert',
        heading: 'Recorded on the blockchain; the signer’s details were erased at their request',
        body: [
          'This signature is on the blockchain, but the signer deleted their account with this verification service, which then erased the encrypted details it held, so this page cannot say who signed. Check the signed PDF below: it carries the details itself.',
        ],
        retry: false,
        title: ['Signer details erased'],
      }
    case 'unreadable':
      return {
        tone: 'bad',
        role: 'alert',
        heading: 'The signer’s details cannot be read',
        body: [
          'The stored details match the blockchain record, but they are not in a form this page understands. Do not rely on this page for this signature.',
        ],
        retry: false,
        title: ['Details cannot be read'],
      }
    case 'invalid-link':
      return {
        tone: 'bad',
        role: 'alert',
        heading: 'This is not a valid verification link',
        body: ['The address does not contain a transaction reference. Scan the QR code on the document again.'],
        retry: false,
        title: ['Not a verification link'],
      }
    case 'not-found':
      return {
        tone: 'bad',
        role: 'alert',
        heading: 'No signature found for this link',
        body: [
          'No signature is recorded on the blockchain under this transaction. Check that you scanned the QR code of the document you received. A signature made moments ago can take a few seconds to appear.',
        ],
        retry: true,
        title: ['No signature found'],
      }
    case 'unavailable':
      return { tone: 'warn', role: 'alert', retry: true, ...unavailableText(verdict) }
  }
}

function unavailableText(
  verdict: Extract<Verdict, { kind: 'unavailable' }>,
): Pick<VerdictText, 'heading' | 'body' | 'title'> {
  const nothingSaid = 'This says nothing about the signature itself.'
  switch (verdict.reason) {
    case 'network':
      return {
        heading: 'The verification service cannot be reached',
        body: [`Check your internet connection and try again. ${nothingSaid}`],
        title: ['Service unreachable'],
      }
    case 'chain':
      return {
        heading: 'The blockchain cannot be reached right now',
        body: [`The verification service could not read the blockchain. ${nothingSaid} Try again in a minute.`],
        title: ['Blockchain unavailable'],
      }
    case 'busy':
      return {
        heading: 'Too many checks right now',
        body: [
          `The verification service is busy. Try again ${verdict.retryAfterSeconds ? `in ${verdict.retryAfterSeconds} seconds` : 'shortly'}. ${nothingSaid}`,
        ],
        title: ['Service busy'],
      }
    case 'too-deep':
      return {
        heading: 'This chain of signatures is too long to check here',
        body: [
          'The document was signed more times than this service checks in one go. Check the transaction on the blockchain directly.',
        ],
        title: ['Chain too long'],
      }
    case 'server':
      return {
        heading: 'The verification service gave an unexpected answer',
        body: [`Try again later. ${nothingSaid}`],
        title: ['Unexpected answer'],
      }
  }
}
