// Which JWT a command uses: ANCHOR_TOKEN, else the stored login for the same service; refused when expired, so the
// user hears "log in again" before anything is hashed or paid for.

import { decodeJwt } from 'jose'
import type { CliConfig } from './cli-config.ts'
import { CliError, EXIT } from './cli-errors.ts'
import { displayTime } from './display-time.ts'
import { notLoggedIn } from './service-client.ts'
import { readStoredLogin } from './token-store.ts'

export interface ActiveLogin {
  token: string
  email: string | undefined
  trust: unknown
  verified: unknown
}

export async function activeLogin(config: CliConfig, serviceUrl: string, now = Date.now()): Promise<ActiveLogin> {
  let token = config.token
  if (!token) {
    const stored = await readStoredLogin(config.configDir)
    if (!stored) throw notLoggedIn()
    if (stored.service !== serviceUrl) {
      throw new CliError(
        `you are logged in to ${stored.service}, not ${serviceUrl}: run \`anchor login --service ${serviceUrl}\``,
        EXIT.service,
        'NOT_LOGGED_IN',
      )
    }
    token = stored.token
  }
  let claims: ReturnType<typeof decodeJwt>
  try {
    claims = decodeJwt(token)
  } catch {
    throw new CliError('the login token is not a JWT: run `anchor login` again', EXIT.service, 'LOGIN_INVALID')
  }
  if (typeof claims.exp === 'number' && claims.exp * 1000 <= now) {
    throw new CliError(
      `your login expired at ${displayTime(claims.exp * 1000)}: run \`anchor login\` again`,
      EXIT.service,
      'LOGIN_EXPIRED',
    )
  }
  return {
    token,
    email: typeof claims.email === 'string' ? claims.email : undefined,
    trust: claims.trust,
    verified: claims.verified,
  }
}
