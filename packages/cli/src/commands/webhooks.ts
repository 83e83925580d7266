// `anchor webhooks add|list|remove|test|rotate|attempts|replay`: the login's webhook endpoints (/api/webhooks). The
// secret an endpoint signs with is printed once, when it is added or rotated: the service never shows it again.

import { type CliRun, loginServiceUrl, parseCommandArgs, writeJson, writeLines } from '../cli-context.ts'
import { usageError } from '../cli-errors.ts'
import { displayTime } from '../display-time.ts'
import { activeLogin } from '../login-state.ts'
import { ServiceClient } from '../service-client.ts'

export const runWebhooks: CliRun = async (argv, context) => {
  const { values, positionals } = parseCommandArgs(argv, {
    events: { type: 'string' },
    description: { type: 'string' },
    event: { type: 'string' },
    since: { type: 'string' },
    json: { type: 'boolean' },
    service: { type: 'string' },
  })
  const [action, target, ...extra] = positionals
  if (!ACTIONS.includes(action as Action)) {
    throw usageError('which? anchor webhooks add <url> | list | remove | test | rotate | attempts | replay <id>')
  }
  if (action !== 'list' && target === undefined)
    throw usageError(`anchor webhooks ${action} needs its ${action === 'add' ? 'URL' : 'id'}`)
  if ((action === 'list' && target !== undefined) || extra.length > 0)
    throw usageError(`unexpected argument ${extra[0] ?? target}`)
  if (action !== 'add' && (values.events !== undefined || values.description !== undefined)) {
    throw usageError('--events and --description are for add')
  }
  if (action !== 'replay' && (values.event !== undefined || values.since !== undefined)) {
    throw usageError('--event and --since are for replay')
  }
  if (action === 'replay' && (values.event === undefined) === (values.since === undefined)) {
    throw usageError('replay what? --event <evt_…> or --since <ISO time>')
  }
  if (values.since !== undefined && Number.isNaN(Date.parse(values.since))) {
    throw usageError('--since takes a time such as 2026-11-28T09:00:00Z')
  }
  const service = await loginServiceUrl(context, values.service)
  const login = await activeLogin(context.config, service)
  const client = new ServiceClient(service, login.token, { fetch: context.fetch })

  if (action === 'add') {
    const events = values.events
      ?.split(',')
      .map((type) => type.trim())
      .filter((type) => type !== '')
    const created = await client.createWebhook({
      url: target!,
      ...(events && { events }),
      ...(values.description !== undefined && { description: values.description }),
    })
    if (values.json) writeJson(context.io, created)
    else {
      writeLines(context.io.stdout, [
        `Added webhook ${created.id} for ${created.url} (${created.events?.join(', ') ?? 'every event'}).`,
        `Its secret, shown this once: ${created.secret}`,
        'Check each delivery with it (verifyWebhook of @docanchor/client, or any Standard Webhooks library).',
      ])
    }
    return 0
  }
  if (action === 'list') {
    const webhooks = await client.webhooks()
    if (values.json) writeJson(context.io, webhooks)
    else if (webhooks.length === 0) context.io.stdout.write('No webhooks.\n')
    else {
      writeLines(
        context.io.stdout,
        webhooks.map((w) => {
          const state = w.status === 'enabled' ? 'enabled' : `disabled (${w.disabledReason})`
          return `${w.id}  ${state.padEnd(19)}  ${displayTime(w.createdAt)}  ${w.url}  ${w.events?.join(',') ?? 'every event'}`
        }),
      )
    }
    return 0
  }
  if (action === 'remove') {
    await client.deleteWebhook(target!)
    writeLines(context.io.stdout, [`Removed webhook ${target}.`])
    return 0
  }
  if (action === 'rotate') {
    const secret = await client.rotateWebhookSecret(target!)
    writeLines(context.io.stdout, [
      `Its new secret, shown this once: ${secret}`,
      'The previous one keeps signing beside it for 24 hours: switch your receiver to the new one before then.',
    ])
    return 0
  }
  if (action === 'attempts') {
    const page = await client.webhookAttempts(target!)
    if (values.json) writeJson(context.io, page.attempts)
    else if (page.attempts.length === 0) context.io.stdout.write('No attempts yet.\n')
    else {
      writeLines(
        context.io.stdout,
        page.attempts.map(
          (a) =>
            `${displayTime(a.at)}  ${a.status.padEnd(7)}  #${a.attempt}  ${a.type.padEnd(20)}  ${a.eventId}  ${a.durationMs} ms`,
        ),
      )
    }
    return 0
  }
  if (action === 'replay') {
    const which =
      values.event !== undefined ? { eventId: values.event } : { since: new Date(values.since!).toISOString() }
    const queued = await client.replayWebhook(target!, which)
    writeLines(context.io.stdout, [`${queued} failed deliveries queued again for ${target}.`])
    return 0
  }
  await client.testWebhook(target!)
  writeLines(context.io.stdout, [`A webhook.test event is on its way to ${target}.`])
  return 0
}

const ACTIONS = ['add', 'list', 'remove', 'test', 'rotate', 'attempts', 'replay'] as const
type Action = (typeof ACTIONS)[number]
