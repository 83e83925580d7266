// Secrets given as files: `JWT_SECRET_FILE=/run/secrets/jwt_secret` instead of `JWT_SECRET=…`, so that a secret
// stays out of the process's environment listing (`podman inspect`, `docker inspect`, /proc/<pid>/environ), as
// container engines' secrets and systemd's credentials hand them over. The file's content, its final line break
// removed, is the setting's value.
import { readFileSync } from 'node:fs'
import type { Env } from './env-fields.ts'

/** Every setting that is or may hold a secret (a URL can carry a password or an API key). */
export const SECRET_SETTINGS = [
  'JWT_SECRET',
  'DATABASE_URL',
  'REDIS_URL',
  'RPC_URL',
  'RELAYER_PRIVATE_KEY',
  'SMTP_URL',
  'METRICS_TOKEN',
  'GOOGLE_CLIENT_SECRET',
  'MICROSOFT_CLIENT_SECRET',
] as const

/** `env` with each `<SECRET>_FILE` read into `<SECRET>`; a problem (never the content) for each that cannot be. */
export function withSecretFiles(env: Env, problems: string[]): Env {
  const resolved: Env = { ...env }
  for (const name of SECRET_SETTINGS) {
    const file = env[`${name}_FILE`]?.trim()
    if (!file) continue
    if (env[name]?.trim()) {
      problems.push(`${name}: give ${name} or ${name}_FILE, not both`)
      continue
    }
    try {
      resolved[name] = readFileSync(file, 'utf8').replace(/\r?\n$/, '')
    } catch {
      problems.push(`${name}_FILE: cannot be read`)
      continue
    }
    if (resolved[name]?.trim() === '') problems.push(`${name}_FILE: the file is empty`)
  }
  return resolved
}
