// The one place that reads the environment: turns it into a typed, validated config object once, at start. Each
// concern's variables and what they become are written once, in its own module (a new setting: its variable and its
// mapping, side by side); the config's type is what those modules build.
import { z } from 'zod'
import { authEnv, authSettings } from './auth-settings.ts'
import { chainEnv, chainSettings } from './chain-settings.ts'
import { ConfigError, type Env } from './env-fields.ts'
import { libraryEnv, librarySettings } from './library-settings.ts'
import { pdfSigningEnv, pdfSigningSettings } from './pdf-signing-settings.ts'
import { relayEnv, relaySettings } from './relay-settings.ts'
import { requestLimits, requestLimitsEnv } from './request-limits.ts'
import { withSecretFiles } from './secret-files.ts'
import { isProduction, serverEnv, serverSettings } from './server-settings.ts'
import { tokenEnv } from './token-settings.ts'
import { verifyEnv, verifySettings } from './verify-settings.ts'
import { webhookEnv, webhookSettings } from './webhook-settings.ts'

const EnvSchema = z.object({
  ...serverEnv,
  ...chainEnv,
  ...tokenEnv,
  ...pdfSigningEnv,
  ...authEnv,
  ...relayEnv,
  ...verifyEnv,
  ...libraryEnv,
  ...requestLimitsEnv,
  ...webhookEnv,
})

export type Config = ReturnType<typeof loadConfig>

/** Parses the environment; throws ConfigError naming every bad or missing variable. */
export function loadConfig(env: Env) {
  const problems: string[] = []
  const parsed = EnvSchema.safeParse(withSecretFiles(env, problems))
  if (!parsed.success || problems.length > 0) {
    const lines = (parsed.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`)
    throw new ConfigError(`Invalid configuration:\n  ${[...problems, ...lines].join('\n  ')}`)
  }
  const e = parsed.data
  const production = isProduction(e)
  const config = {
    ...serverSettings(e, production, problems),
    chain: chainSettings(e, e.PORT, problems),
    pdfSigning: pdfSigningSettings(e, production, problems),
    ...authSettings(e, production, problems),
    ...relaySettings(e, e.RPC_URL.length === 0, problems),
    limits: requestLimits(e),
    verify: verifySettings(e),
    library: librarySettings(e),
    webhooks: webhookSettings(e, production, problems),
  }
  if (production) {
    // Production never falls back to embedded state: every one of these must be given explicitly.
    const required: [string, unknown][] = [
      ['JWT_SECRET', e.JWT_SECRET],
      ['DATABASE_URL', e.DATABASE_URL],
      ['RPC_URL', e.RPC_URL.length > 0 ? e.RPC_URL : undefined],
      ['RELAYER_PRIVATE_KEY', e.RELAYER_SIGNER !== 'local' || e.RELAYER_PRIVATE_KEY.length > 0 ? true : undefined],
      ['CONTRACT_ADDRESS', e.CONTRACT_ADDRESS],
      ['SMTP_URL', e.SMTP_URL],
      ['PUBLIC_URL', e.PUBLIC_URL],
      ['METRICS_TOKEN', e.METRICS_TOKEN],
    ]
    for (const [name, value] of required) {
      if (value === undefined) problems.push(`${name}: required in production`)
    }
  }
  if (problems.length > 0) throw new ConfigError(`Invalid configuration:\n  ${problems.join('\n  ')}`)
  return config
}

/** The process's own environment: the one read of `process.env` in the codebase. */
export function processEnv(): Env {
  return process.env
}

export function loadConfigFromProcess(): Config {
  return loadConfig(processEnv())
}

/**
 * DATABASE_URL alone, read as the service reads it (undefined when unset or empty): for the owner's relayer rotation
 * commands (`deploy drain`, `deploy revoke`), which need the instances' database and none of their other settings.
 */
export function databaseUrlOf(env: Env): string | undefined {
  return serverEnv.DATABASE_URL.parse(env.DATABASE_URL)
}
