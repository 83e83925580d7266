// Field rules shared by the anchor payload and the PDF metadata, so a signature valid in one is valid in the other.

import { z } from 'zod'
import { firstDisplayControl } from './display-text.ts'

export const SIGNER_TYPES = ['individual', 'company'] as const
export type SignerType = (typeof SIGNER_TYPES)[number]

export const TRUST_ANCHORS = ['email', 'google', 'microsoft'] as const
export type TrustAnchor = (typeof TRUST_ANCHORS)[number]

// Without the `u` flag the pattern sees UTF-16 code units, which is what finds a lone surrogate: it cannot be
// encoded as UTF-8 (TextEncoder would silently turn it into U+FFFD and change the hash).
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

export function isWellFormedText(value: string): boolean {
  return !LONE_SURROGATE.test(value)
}

// E-mail addresses as people type them, internationalized ones included (RFC 6531): dot-atoms of ASCII `atext` or
// any printable non-ASCII character, at most 64 octets before the `@`; a domain of two or more labels of letters,
// digits and inner hyphens. Quoted local parts and address literals are refused: no signer has one.
const NON_ASCII = '[^\\p{C}\\p{Z}\\x00-\\x7F]'
const LOCAL_ATOM = `(?:[A-Za-z0-9!#$%&'*+/=?^_\`{|}~-]|${NON_ASCII})+`
const LABEL_CHAR = `(?:[A-Za-z0-9]|${NON_ASCII})`
const LABEL = `${LABEL_CHAR}(?:(?:${LABEL_CHAR}|-)*${LABEL_CHAR})?`
const LOCAL_PART = new RegExp(`^${LOCAL_ATOM}(?:\\.${LOCAL_ATOM})*$`, 'u')
const DOMAIN_LABEL = new RegExp(`^${LABEL}$`, 'u')

const utf8 = new TextEncoder()

export function isEmailAddress(value: string): boolean {
  const at = value.lastIndexOf('@')
  if (at < 1 || value.length > 254) return false
  const local = value.slice(0, at)
  const labels = value.slice(at + 1).split('.')
  return (
    utf8.encode(local).length <= 64 &&
    LOCAL_PART.test(local) &&
    labels.length >= 2 &&
    labels.every((label) => label.length <= 63 && DOMAIN_LABEL.test(label))
  )
}

/**
 * A schema-wide message for a field that is present but wrong; a missing field keeps the common "is required".
 */
export const unlessMissing =
  (message: string) =>
  (issue: { input?: unknown }): string | undefined =>
    issue.input === undefined ? undefined : message

const HEX_64 = /^[0-9a-fA-F]{64}$/
const PREFIXED_HEX_64 = /^0x[0-9a-fA-F]{64}$/

export const text = () => z.string().refine(isWellFormedText, { error: 'contains an unpaired UTF-16 surrogate' })

/**
 * Text a new signature may carry: no C0 or C1 control and no bidirectional embedding, override or isolate, which
 * would change how a reader's terminal or page shows the text around it. Readers of older files stay lenient.
 */
export const newText = () =>
  text().superRefine((value, ctx) => {
    const found = firstDisplayControl(value)
    if (found) {
      ctx.addIssue({ code: 'custom', message: `contains ${found}, a control or bidirectional formatting character` })
    }
  })

export const hex64 = (what: string) => z.string().regex(HEX_64, { error: `must be ${what}: 64 hex characters` })

export const prefixedHex64 = (what: string) =>
  z.string().regex(PREFIXED_HEX_64, { error: `must be ${what}: 0x followed by 64 hex characters` })

export const signerName = (fresh = false) =>
  (fresh ? newText() : text()).refine((value) => value.trim() !== '', { error: 'must not be empty' })

export const emailAddress = () => z.string().refine(isEmailAddress, { error: 'not a valid e-mail address' })

export const signerType = () =>
  z.enum(SIGNER_TYPES, { error: unlessMissing(`must be one of ${SIGNER_TYPES.join(', ')}`) })

export const trustAnchor = () =>
  z.enum(TRUST_ANCHORS, { error: unlessMissing(`must be one of ${TRUST_ANCHORS.join(', ')}`) })

export const latitude = () =>
  z
    .number()
    .min(-90, { error: 'latitude must be between -90 and 90' })
    .max(90, { error: 'latitude must be between -90 and 90' })

export const longitude = () =>
  z
    .number()
    .min(-180, { error: 'longitude must be between -180 and 180' })
    .max(180, { error: 'longitude must be between -180 and 180' })

/** 9999-12-31T23:59:59Z: the PDF metadata writes four-digit years, so a later `ts` could not be written there. */
export const MAX_UNIX_SECONDS = 253_402_300_799

export const unixSeconds = () =>
  z
    .number()
    .int({ error: 'must be a whole number of seconds' })
    .min(0, { error: 'must not be negative' })
    .max(MAX_UNIX_SECONDS, { error: 'must be before the year 10000' })
