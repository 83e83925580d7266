// Configuration of the `anchor` command, the one place the CLI reads its environment (as src/config.ts is for the
// service): the service URL, a token that overrides the stored login, and where the login is kept.

import { homedir } from 'node:os'
import { join } from 'node:path'

export const DEFAULT_SERVICE_URL = 'http://127.0.0.1:3000'

export interface CliConfig {
  /** `ANCHOR_URL`, else the default; `--service` overrides it per command. */
  serviceUrl: string
  /** Whether `ANCHOR_URL` names the service (rather than the default standing in). */
  serviceUrlConfigured: boolean
  /** `ANCHOR_TOKEN`: a JWT used instead of the stored login, for scripts. */
  token: string | undefined
  /** Directory of the stored login: `$XDG_CONFIG_HOME/anchor`, else `~/.config/anchor`. */
  configDir: string
}

export function loadCliConfig(env: Readonly<Record<string, string | undefined>>): CliConfig {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config')
  return {
    serviceUrl: env.ANCHOR_URL || DEFAULT_SERVICE_URL,
    serviceUrlConfigured: Boolean(env.ANCHOR_URL),
    token: env.ANCHOR_TOKEN || undefined,
    configDir: join(base, 'anchor'),
  }
}

export function loadCliConfigFromProcess(): CliConfig {
  return loadCliConfig(process.env)
}
