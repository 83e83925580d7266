// `anchor events`: what happened to the login's anchors (GET /api/events), oldest first: confirmed, final, reorged,
// failed, countersigned by someone else. --follow keeps asking every few seconds and prints what comes, until
// interrupted; --after starts past a cursor an earlier run printed, so a script picks up where it stopped.

import type { AccountEvent } from '@docanchor/client'
import { type CliRun, loginServiceUrl, parseCommandArgs, writeLines } from '../cli-context.ts'
import { usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { activeLogin } from '../login-state.ts'
import { ServiceClient } from '../service-client.ts'

/** How often --follow asks: well under the service's per-user limit, soon enough for a person watching. */
const FOLLOW_INTERVAL_MS = 3_000
const PAGE = 500

export const runEvents: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    after: { type: 'string' },
    follow: { type: 'boolean' },
    json: { type: 'boolean' },
    service: { type: 'string' },
  })
  if (positionals.length > 0) throw usageError(`unexpected argument ${positionals[0]}`)
  // The service's own cursors: a position, no leading zero.
  if (values.after !== undefined && !/^(0|[1-9]\d{0,17})$/.test(values.after)) {
    throw usageError('--after takes a cursor')
  }
  const service = await loginServiceUrl(context, values.service)
  const login = await activeLogin(context.config, service)
  const client = new ServiceClient(service, login.token, { fetch: context.fetch })

  let cursor = values.after ?? '0'
  let printed = 0
  for (;;) {
    const page = await client.events({ after: cursor, limit: PAGE })
    // JSON: one event per line, so that a follower's output can be read line by line as it comes.
    const lines = page.events.map((event) => (values.json ? JSON.stringify(event) : eventLine(event)))
    if (lines.length > 0) writeLines(context.io.stdout, lines)
    printed += page.events.length
    cursor = page.nextCursor
    if (page.events.length === PAGE) continue
    if (!values.follow) break
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS))
  }
  if (!values.json) {
    if (printed === 0) context.io.stdout.write('No events yet.\n')
    context.io.stderr.write(`next: anchor events --after ${cursor}\n`)
  }
  return 0
}

function eventLine(event: AccountEvent): string {
  const data = event.data as { txHash?: string; blockNumber?: number | null; countersignature?: { txHash: string } }
  const block = data.blockNumber === null || data.blockNumber === undefined ? '' : `block ${data.blockNumber}`
  const counter = data.countersignature ? `countersigned by ${data.countersignature.txHash}` : ''
  return [displayTime(event.timestamp), event.type.padEnd(20), data.txHash ?? '', block.padEnd(12), counter]
    .join('  ')
    .trimEnd()
}
