// `anchor login [--email <address>] [--service <url>]`: e-mail code sign-in; the code is typed on the terminal.

import { createInterface } from 'node:readline'
import type { CliRun } from '../cli-context.ts'
import { parseCommandArgs, serviceUrl, writeLines } from '../cli-context.ts'
import { CliError, usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { ServiceClient } from '../service-client.ts'
import { saveStoredLogin, tokenFile } from '../token-store.ts'

export const runLogin: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    email: { type: 'string' },
    service: { type: 'string' },
  })
  if (positionals.length > 0) throw usageError(`unexpected argument ${positionals[0]}`)
  const service = serviceUrl(context, values.service)
  const { io } = context
  // Closed when the command ends: an open interface keeps a terminal's stdin reading, and the process alive.
  const reader = createInterface({ input: io.stdin, terminal: false })
  const lines = reader[Symbol.asyncIterator]()
  const ask = async (prompt: string) => {
    io.stderr.write(prompt)
    const line = await lines.next()
    if (line.done) throw usageError('no answer on standard input')
    return String(line.value).trim()
  }
  try {
    const email = values.email ?? (await ask('E-mail address: '))
    if (!email) throw usageError('an e-mail address is required')
    const client = new ServiceClient(service, undefined, { fetch: context.fetch })
    await client.requestCode(email)
    io.stderr.write(`A 6-digit sign-in code was sent to ${email}.\n`)
    const result = await signInWithCode(client, email, ask, io.stderr)
    await saveStoredLogin(context.config.configDir, {
      service,
      email: result.user.email,
      token: result.token,
      expiresAt: result.expiresAt,
    })
    writeLines(io.stdout, [`Logged in to ${service} as ${result.user.email} until ${displayTime(result.expiresAt)}.`])
    io.stderr.write(`(token saved in ${tokenFile(context.config.configDir)})\n`)
    return 0
  } finally {
    reader.close()
  }
}

/** The service takes this many wrong tries of one code (src/auth/sign-in-codes.ts) before the code is dead. */
const CODE_TRIES = 5

/**
 * Asks for the code until one works: a typo asks again, up to the service's tries, rather than spending a new code.
 * When the input ends after a wrong code (a script), that wrong code is the answer.
 */
async function signInWithCode(
  client: ServiceClient,
  email: string,
  ask: (prompt: string) => Promise<string>,
  stderr: NodeJS.WritableStream,
) {
  let wrong: CliError | undefined
  for (let tries = 1; ; tries++) {
    let code: string
    try {
      code = await ask('Code: ')
    } catch (error) {
      throw wrong ?? error
    }
    if (!/^\d{6}$/.test(code)) throw usageError('the code is the 6 digits from the e-mail')
    try {
      return await client.verifyCode(email, code)
    } catch (error) {
      if (!(error instanceof CliError) || error.code !== 'INVALID_CODE' || tries >= CODE_TRIES) throw error
      wrong = error
      const left = CODE_TRIES - tries
      stderr.write(`That code is wrong (or expired): type it again (${left} ${left === 1 ? 'try' : 'tries'} left).\n`)
    }
  }
}
