// `anchor account export|notifications|delete`: the login's own data (GET /api/account/export), the e-mails it asked
// for (GET and PUT /api/account/notifications) and the end of its account (DELETE /api/account). The export holds personal data: its file is readable by the user alone (0600). Deleting asks
// for the account's e-mail address on the command line, so that no stray command or recalled history line deletes an
// account by itself.

import { type CliRun, loginServiceUrl, parseCommandArgs, writeJson, writeLines } from '../cli-context.ts'
import { EXIT, usageError } from '../cli-errors.ts'
import { activeLogin } from '../login-state.ts'
import { reserveOutput } from '../output-file.ts'
import { ServiceClient } from '../service-client.ts'
import { deleteStoredLogin, readStoredLogin } from '../token-store.ts'

export const runAccount: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    output: { type: 'string', short: 'o' },
    confirm: { type: 'string' },
    countersigned: { type: 'string' },
    service: { type: 'string' },
  })
  const [action, ...extra] = positionals
  if (action !== 'export' && action !== 'notifications' && action !== 'delete') {
    throw usageError('which? anchor account export | notifications | delete')
  }
  if (extra.length > 0) throw usageError(`unexpected argument ${extra[0]}`)
  if (action !== 'delete' && values.confirm !== undefined) throw usageError('--confirm is for delete')
  if (action !== 'export' && values.output !== undefined) throw usageError('-o is for export')
  if (action !== 'notifications' && values.countersigned !== undefined) {
    throw usageError('--countersigned is for notifications')
  }
  const countersigned = values.countersigned === undefined ? undefined : onOrOff(values.countersigned)
  const service = await loginServiceUrl(context, values.service)
  const login = await activeLogin(context.config, service)
  const client = new ServiceClient(service, login.token, { fetch: context.fetch })

  if (action === 'notifications') {
    const notifications =
      countersigned === undefined ? await client.notifications() : await client.setNotifications({ countersigned })
    writeLines(context.io.stdout, [
      notifications.countersigned
        ? `An e-mail goes to ${login.email ?? 'the account'} when someone signs a document after you.`
        : 'No e-mail when someone signs after you (turn it on with --countersigned on).',
    ])
    return EXIT.ok
  }

  if (action === 'export') {
    if (values.output === undefined) {
      writeJson(context.io, await client.exportAccount())
      return EXIT.ok
    }
    // Claimed before asking, so a wrong path costs no export of the few an hour the service allows.
    const output = await reserveOutput(values.output, { mode: 0o600, unwritten: 'nothing was exported' })
    try {
      await output.write(new TextEncoder().encode(`${JSON.stringify(await client.exportAccount(), null, 2)}\n`))
    } finally {
      await output.release()
    }
    writeLines(context.io.stdout, [
      `Wrote everything ${service} holds about ${login.email ?? 'the account'} to ${values.output}.`,
    ])
    return EXIT.ok
  }

  if (!login.email || values.confirm?.trim().toLowerCase() !== login.email.toLowerCase()) {
    throw usageError(
      `deleting ${login.email ?? 'the account'} needs its address once more: --confirm ${login.email ?? '<e-mail>'}`,
    )
  }
  await client.deleteAccount()
  // The session went with the account: a stored login for it is of no more use (a login of another account stays).
  const stored = await readStoredLogin(context.config.configDir)
  if (stored?.service === service && stored.email.toLowerCase() === login.email.toLowerCase()) {
    await deleteStoredLogin(context.config.configDir)
  }
  writeLines(context.io.stdout, [
    `Deleted the account ${login.email} at ${service}.`,
    'Its anchors stay on the chain; the details the service kept of them are erased.',
  ])
  return EXIT.ok
}

function onOrOff(value: string): boolean {
  if (value === 'on') return true
  if (value === 'off') return false
  throw usageError(`--countersigned takes on or off, not ${value}`)
}
