// `npm run admin -- users <action> <email|id> …`: the operator's commands on accounts, run against the service's
// database like `npm run deploy`'s rotation commands. Every change is audited (operator_audit) in the transaction that
// makes it and printed; sessions it ends or blocks are announced through Redis (REDIS_URL), so every instance stops
// accepting them at once instead of within its session cache's 5 s.
import { parseArgs } from 'node:util'
import { type AccountChange, changeAccount, findAccount, showAccount } from '../accounts/operator-actions.ts'
import type { Database } from '../db/database.ts'

export const adminUsage = `usage: admin users <action> <email|id> [options]

  show             plan, this month's usage and limit, sessions, anchors, library, blocked   [--json]
  plan <plan>      set the plan (one of PLANS)
  limit <n|plan>   a monthly anchor limit for this user alone, or back to the plan's
  block            the account cannot sign in; its sessions answer 403 ACCOUNT_BLOCKED at once
  unblock
  revoke-sessions  every session ends (401 at once); the account can sign in again
  delete           the account goes as DELETE /api/account does (anchors stay on chain, their details erased)

  --operator <name>  who does it, for the audit record: required by every action but show

The database is the service's: DATABASE_URL (PostgreSQL), else the embedded one under DATA_DIR, which only one
process can open: stop the service first. With REDIS_URL, ended sessions are announced to every instance.`

export interface AdminTarget {
  db: Database
  /** The plans and their monthly limits (PLANS), and the default. */
  plans: Record<string, number>
  defaultPlan: string
  /** Tells every instance to drop these sessions from its cache of live ones. */
  announceEnded(userId: string, sessionIds: readonly string[]): Promise<void>
  /** Tells every instance to forget its cached verifications of these transactions (their ciphertexts were erased). */
  announceErased(txHashes: readonly string[]): Promise<void>
  close(): Promise<void>
}

export interface AdminIo {
  stdout: NodeJS.WritableStream
  stderr: NodeJS.WritableStream
  open(): Promise<AdminTarget>
}

const ACTIONS = ['show', 'plan', 'limit', 'block', 'unblock', 'revoke-sessions', 'delete'] as const
type Action = (typeof ACTIONS)[number]

class UsageError extends Error {}

export async function runAdminCommand(argv: readonly string[], io: AdminIo): Promise<number> {
  let parsed: { action: Action; who: string; value: string | undefined; operator: string | undefined; json: boolean }
  try {
    parsed = parseArguments(argv)
  } catch (error) {
    if (!(error instanceof UsageError || error instanceof TypeError)) throw error
    io.stderr.write(`admin: ${(error as Error).message}\n\n${adminUsage}\n`)
    return 2
  }
  const target = await io.open()
  try {
    const account = await findAccount(target.db, parsed.who)
    if (!account) {
      io.stderr.write(`admin: no account ${JSON.stringify(parsed.who)}\n`)
      return 1
    }
    if (parsed.action === 'show') {
      const view = await showAccount(target.db, account.id, target)
      if (!view) throw new Error('the account went while it was read')
      io.stdout.write(parsed.json ? `${JSON.stringify(view, null, 2)}\n` : `${describe(view)}\n`)
      return 0
    }
    const change = changeOf(parsed.action, parsed.value, target.plans)
    const outcome = await changeAccount(target.db, parsed.operator!, account.id, change)
    if (!outcome) {
      io.stderr.write(`admin: no account ${JSON.stringify(parsed.who)}\n`)
      return 1
    }
    // Done and audited: said first, whatever becomes of the announcements.
    io.stdout.write(
      `${parsed.action} ${outcome.email} (${outcome.userId}) by ${parsed.operator}\n` +
        `  before: ${JSON.stringify(outcome.before)}\n  after:  ${JSON.stringify(outcome.after)}\n`,
    )
    try {
      await target.announceEnded(outcome.userId, outcome.ended)
      await target.announceErased(outcome.erased)
    } catch (error) {
      io.stderr.write(
        `warning: the change is made, but the instances were not told (${(error as Error).message}): ` +
          "they catch up within their caches' lifetimes (sessions 5 s, verifications 60 s)\n",
      )
    }
    return 0
  } catch (error) {
    if (!(error instanceof UsageError)) throw error
    io.stderr.write(`admin: ${error.message}\n`)
    return 2
  } finally {
    await target.close()
  }
}

function parseArguments(argv: readonly string[]) {
  const { values, positionals } = parseArgs({
    args: [...argv],
    options: { operator: { type: 'string' }, json: { type: 'boolean' } },
    allowPositionals: true,
    strict: true,
  })
  const [noun, action, who, value, ...rest] = positionals
  if (noun !== 'users') throw new UsageError('the first word is `users`')
  if (!ACTIONS.includes(action as Action)) throw new UsageError(`unknown action ${JSON.stringify(action ?? '')}`)
  if (!who) throw new UsageError('name the account by its e-mail address or id')
  const takesValue = action === 'plan' || action === 'limit'
  if (takesValue && value === undefined) throw new UsageError(`${action} needs a value`)
  if ((!takesValue && value !== undefined) || rest.length > 0) throw new UsageError('too many arguments')
  const operator = values.operator?.trim()
  if (action !== 'show' && !operator) throw new UsageError('--operator <name> is required: the audit records who acted')
  return { action: action as Action, who, value, operator, json: values.json ?? false }
}

function changeOf(
  action: Exclude<Action, 'show'>,
  value: string | undefined,
  plans: Record<string, number>,
): AccountChange {
  switch (action) {
    case 'plan':
      if (!Object.hasOwn(plans, value!))
        throw new UsageError(`no plan ${JSON.stringify(value)}: PLANS has ${Object.keys(plans).join(', ')}`)
      return { action, plan: value! }
    case 'limit': {
      if (value === 'plan') return { action, monthlyLimit: null }
      const limit = Number(value)
      if (!/^\d+$/.test(value!) || !Number.isSafeInteger(limit) || limit > 2_147_483_647) {
        throw new UsageError(`limit ${JSON.stringify(value)}: a whole number of anchors a month, or "plan"`)
      }
      return { action, monthlyLimit: limit }
    }
    default:
      return { action }
  }
}

function describe(view: NonNullable<Awaited<ReturnType<typeof showAccount>>>): string {
  const limit = view.monthlyLimit === null ? `${view.usage.limit} (plan)` : `${view.usage.limit} (this user's own)`
  return [
    `${view.email}  ${view.id}`,
    `  plan      ${view.plan}, signs in with ${view.authProvider}, since ${view.createdAt}`,
    `  usage     ${view.usage.used} of ${limit} in ${view.usage.period}`,
    `  sessions  ${view.liveSessions} live`,
    `  anchors   ${view.anchors.confirmed} confirmed, ${view.anchors.pending} pending, ${view.anchors.failed} failed`,
    `  library   ${view.library.signatures} signatures, ${view.library.snippets} snippets`,
    `  blocked   ${view.blockedAt ?? 'no'}`,
  ].join('\n')
}
