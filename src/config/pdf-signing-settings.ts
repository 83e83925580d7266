// PDF signing: the key the signer CA certifies with (the development identity, or a key on the token with its
// certificate chain), and the time-stamping authorities.
import { readFileSync } from 'node:fs'
import { z } from 'zod'
import { type EnvValues, integer, list, optionalString } from './env-fields.ts'
import { type TokenConfig, type tokenEnv, tokenSettings } from './token-settings.ts'

export const pdfSigningEnv = {
  /**
   * Where the PDF signatures' key lives: `development` (a CA and certificates made under DATA_DIR, untrusted) or
   * `pkcs11` (PDF_SIGNING_KEY_LABEL on the PKCS11_* token, certified by PDF_SIGNING_CERTIFICATES). Production: pkcs11.
   */
  PDF_SIGNER: z.enum(['development', 'pkcs11']).optional(),
  PDF_SIGNING_KEY_LABEL: optionalString,
  /** A PEM file: the signing certificate first, then its chain up to the root. */
  PDF_SIGNING_CERTIFICATES: optionalString,
  /** RFC 3161 time-stamping authorities, asked in turn; without any, the development TSA (not in production). */
  TSA_URL: list,
  TSA_ATTEMPT_TIMEOUT_MS: integer(5_000, 100),
  TSA_DEADLINE_MS: integer(15_000, 100),
  TSA_ATTEMPTS: integer(4, 1),
  /**
   * A PEM file of the roots the TSA_URL authorities' certificates chain to: a token that does not chain to one of them
   * is refused. Required in production, where it is also what verifiers are told to trust for timestamps.
   */
  TSA_TRUSTED_CERTIFICATES: optionalString,
}

type PdfSigningEnvValues = EnvValues<typeof pdfSigningEnv & typeof tokenEnv>

/** The key and certificates the service's PDF signatures are made with. */
export type PdfSignerConfig =
  | { kind: 'development' }
  | { kind: 'pkcs11'; token: TokenConfig; keyLabel: string; certificatesPem: string }

export function pdfSigningSettings(e: PdfSigningEnvValues, production: boolean, problems: string[]) {
  const signer = pdfSignerSettings(e, production, problems)
  for (const url of e.TSA_URL) {
    if (!/^https?:\/\/\S+$/i.test(url)) problems.push(`TSA_URL: ${JSON.stringify(url)} is not an http(s) URL`)
  }
  if (production && e.TSA_URL.length === 0) {
    problems.push('TSA_URL: required in production (the development TSA is not a trusted time source)')
  }
  const trustedCertificatesPem = tsaTrustedCertificates(e, production, problems)
  return {
    signer: signer ?? ({ kind: 'development' } as PdfSignerConfig),
    timestamps: {
      /** Empty: the development TSA (never in production). */
      urls: e.TSA_URL,
      /** PEM: the roots the authorities' tokens must chain to; undefined only outside production. */
      trustedCertificatesPem,
      attemptTimeoutMs: e.TSA_ATTEMPT_TIMEOUT_MS,
      deadlineMs: e.TSA_DEADLINE_MS,
      attempts: e.TSA_ATTEMPTS,
    },
  }
}

export type TimestampConfig = ReturnType<typeof pdfSigningSettings>['timestamps']

/** The PDF signatures' key: the development identity, or a key on the token with its certificate chain. */
function pdfSignerSettings(
  e: PdfSigningEnvValues,
  production: boolean,
  problems: string[],
): PdfSignerConfig | undefined {
  const kind = e.PDF_SIGNER ?? (production ? 'pkcs11' : 'development')
  if (kind === 'development') {
    if (production)
      problems.push('PDF_SIGNER: must be pkcs11 in production (the development certificates are untrusted)')
    return { kind }
  }
  const before = problems.length
  if (e.PDF_SIGNING_KEY_LABEL === undefined) problems.push('PDF_SIGNING_KEY_LABEL: required when PDF_SIGNER is pkcs11')
  let certificatesPem: string | undefined
  if (e.PDF_SIGNING_CERTIFICATES === undefined) {
    problems.push(
      'PDF_SIGNING_CERTIFICATES: required when PDF_SIGNER is pkcs11 (a PEM file, the signing certificate first)',
    )
  } else {
    try {
      certificatesPem = readFileSync(e.PDF_SIGNING_CERTIFICATES, 'utf8')
    } catch {
      problems.push('PDF_SIGNING_CERTIFICATES: cannot be read')
    }
  }
  const token = tokenSettings(e, 'PDF_SIGNER', problems)
  if (problems.length > before || !token) return undefined
  return { kind, token, keyLabel: e.PDF_SIGNING_KEY_LABEL!, certificatesPem: certificatesPem! }
}

/**
 * The roots a TSA's tokens must chain to. Production takes no token on the word of the wire: a plain-HTTP authority
 * (or a proxy in between) could otherwise put any time it likes into every signature.
 */
function tsaTrustedCertificates(e: PdfSigningEnvValues, production: boolean, problems: string[]): string | undefined {
  if (e.TSA_TRUSTED_CERTIFICATES === undefined) {
    if (production && e.TSA_URL.length > 0) {
      problems.push(
        'TSA_TRUSTED_CERTIFICATES: required in production (a PEM file of the roots the TSA_URL authorities chain to)',
      )
    }
    return undefined
  }
  if (e.TSA_URL.length === 0) {
    problems.push('TSA_TRUSTED_CERTIFICATES: given without TSA_URL (the development TSA is trusted by construction)')
    return undefined
  }
  try {
    return readFileSync(e.TSA_TRUSTED_CERTIFICATES, 'utf8')
  } catch {
    problems.push('TSA_TRUSTED_CERTIFICATES: cannot be read')
    return undefined
  }
}
