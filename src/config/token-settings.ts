// A PKCS#11 token: its library, label and PIN, and how long its calls may take. The relayer keys (chain-settings.ts)
// and the signer CA's key (pdf-signing-settings.ts) may live on it.
import { readFileSync } from 'node:fs'
import { type EnvValues, integer, optionalString } from './env-fields.ts'

export const tokenEnv = {
  PKCS11_MODULE: optionalString,
  PKCS11_TOKEN_LABEL: optionalString,
  PKCS11_PIN: optionalString,
  PKCS11_PIN_FILE: optionalString,
  /** Longest wait for one token call; a key whose call takes longer leaves rotation until it answers again. */
  PKCS11_CALL_TIMEOUT_MS: integer(10_000, 100),
  PKCS11_PROBE_INTERVAL_MS: integer(5_000, 50),
}

/** The token's library, label and PIN, for `user` (the variable that chose pkcs11); none of its problems quotes the PIN. */
export function tokenSettings(e: EnvValues<typeof tokenEnv>, user: string, problems: string[]) {
  const before = problems.length
  for (const [name, value] of [
    ['PKCS11_MODULE', e.PKCS11_MODULE],
    ['PKCS11_TOKEN_LABEL', e.PKCS11_TOKEN_LABEL],
  ] as const) {
    if (value === undefined) problems.push(`${name}: required when ${user} is pkcs11`)
  }
  let pin = e.PKCS11_PIN
  if (pin !== undefined && e.PKCS11_PIN_FILE !== undefined) {
    problems.push('PKCS11_PIN: give PKCS11_PIN or PKCS11_PIN_FILE, not both')
  } else if (e.PKCS11_PIN_FILE !== undefined) {
    try {
      pin = readFileSync(e.PKCS11_PIN_FILE, 'utf8').trim()
    } catch {
      problems.push('PKCS11_PIN_FILE: cannot be read')
    }
    if (pin === '') problems.push('PKCS11_PIN_FILE: the file is empty')
  } else if (pin === undefined) {
    problems.push(`PKCS11_PIN: required when ${user} is pkcs11 (or PKCS11_PIN_FILE)`)
  }
  if (problems.length > before) return undefined
  return {
    module: e.PKCS11_MODULE!,
    tokenLabel: e.PKCS11_TOKEN_LABEL!,
    pin: pin!,
    callTimeoutMs: e.PKCS11_CALL_TIMEOUT_MS,
    probeIntervalMs: e.PKCS11_PROBE_INTERVAL_MS,
  }
}

export type TokenConfig = NonNullable<ReturnType<typeof tokenSettings>>
