// `anchor history`: the login's anchors, newest first (GET /api/anchors), one line each, or every page with --all.
// The service knows no file names; the anchors this computer signed are named by the file written (signed-files.ts).

import type { AnchorState } from '@docanchor/client'
import { type CliRun, loginServiceUrl, numberOption, parseCommandArgs, writeJson, writeLines } from '../cli-context.ts'
import { usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { activeLogin } from '../login-state.ts'
import { ServiceClient } from '../service-client.ts'
import { readSignedFiles } from '../signed-files.ts'

const DEFAULT_SHOWN = 20
/** The service's largest page. */
const PAGE_MAX = 100

export const runHistory: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    limit: { type: 'string' },
    all: { type: 'boolean' },
    json: { type: 'boolean' },
    service: { type: 'string' },
  })
  if (positionals.length > 0) throw usageError(`unexpected argument ${positionals[0]}`)
  if (values.all && values.limit !== undefined) throw usageError('give --limit or --all, not both')
  const limit =
    numberOption('limit', values.limit, (n) => Number.isInteger(n) && n >= 1 && n <= PAGE_MAX, 'from 1 to 100') ??
    DEFAULT_SHOWN
  const service = await loginServiceUrl(context, values.service)
  const login = await activeLogin(context.config, service)
  const client = new ServiceClient(service, login.token, { fetch: context.fetch })

  const anchors: AnchorState[] = []
  let cursor: string | undefined
  let more = false
  do {
    const page = await client.anchors({ limit: values.all ? PAGE_MAX : limit, ...(cursor && { cursor }) })
    anchors.push(...page.anchors)
    cursor = page.nextCursor ?? undefined
    more = cursor !== undefined
  } while (values.all && more)

  // By transaction alone: the service lists only the login's anchors, and no two anchors share a transaction.
  const signedFiles = new Map(
    (await readSignedFiles(context.config.configDir).catch(() => [])).map((record) => [
      record.txHash.toLowerCase(),
      record,
    ]),
  )
  const fileOf = (anchor: AnchorState) => signedFiles.get(anchor.txHash.toLowerCase())
  if (values.json) {
    writeJson(
      context.io,
      anchors.map((anchor) => {
        const file = fileOf(anchor)
        return file ? { ...anchor, file: { input: file.input, output: file.output } } : anchor
      }),
    )
    return 0
  }
  if (anchors.length === 0) {
    context.io.stdout.write('No anchors yet.\n')
    return 0
  }
  writeLines(context.io.stdout, [
    ...anchors.map((a) => {
      const block = a.blockNumber === null ? '' : `block ${a.blockNumber}`
      const file = fileOf(a)?.output ?? ''
      return `${displayTime(a.createdAt)}  ${a.status.padEnd(9)}  ${a.txHash}  ${block.padEnd(12)}  ${file}`.trimEnd()
    }),
    ...(more ? [`… more: \`anchor history --all\` lists every one`] : []),
  ])
  return 0
}
