// `anchor logout`: revokes the stored login's session at the service (when reachable) and forgets the token.

import { type CliRun, parseCommandArgs } from '../cli-context.ts'
import { CliError, usageError } from '../cli-errors.ts'
import { ServiceClient } from '../service-client.ts'
import { deleteStoredLogin, readStoredLogin } from '../token-store.ts'

export const runLogout: CliRun = async (argv, context) => {
  const { positionals } = parseCommandArgs(argv, {})
  if (positionals.length > 0) throw usageError(`unexpected argument ${positionals[0]}`)
  const { io, config } = context
  const stored = await readStoredLogin(config.configDir)
  if (!stored) {
    io.stdout.write('Not logged in.\n')
    return 0
  }
  try {
    await new ServiceClient(stored.service, stored.token, { fetch: context.fetch }).logout()
  } catch (error) {
    // The token is forgotten either way; an unreachable service or an expired token has nothing left to revoke.
    if (!(error instanceof CliError)) throw error
    io.stderr.write(`note: the session was not revoked at the service: ${error.message}\n`)
  }
  await deleteStoredLogin(config.configDir)
  io.stdout.write(`Logged out of ${stored.service}.\n`)
  return 0
}
