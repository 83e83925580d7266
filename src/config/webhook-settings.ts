// Webhooks: where the service may deliver, how long an attempt may take, and when it tries again.
import ipaddr from 'ipaddr.js'
import { z } from 'zod'
import { type EnvValues, integer, list } from './env-fields.ts'

/** Seconds after each failed attempt: the first attempt is at once, the last about a day and a half later. */
const RETRY_DELAYS_SECONDS = '5,300,1800,7200,18000,36000,36000'

export const webhookEnv = {
  /** CIDRs the service may deliver to besides public addresses (loopback when not in production). */
  WEBHOOK_ALLOWED_NETWORKS: list,
  WEBHOOK_RETRY_DELAYS_SECONDS: list,
  WEBHOOK_TIMEOUT_MS: integer(10_000, 100),
  /** How often the dispatcher looks for due deliveries; 0 turns it off (tests that drive it by hand). */
  WEBHOOK_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(0).default(1_000),
  /** An endpoint whose every attempt failed for this long is disabled and its owner told. */
  WEBHOOK_DISABLE_AFTER_HOURS: integer(120, 1),
  /** How long attempts, finished deliveries and sent notices are kept (readable, replayable), in days. */
  WEBHOOK_LOG_RETENTION_DAYS: integer(30, 1),
}

export function webhookSettings(e: EnvValues<typeof webhookEnv>, production: boolean, problems: string[]) {
  const networks =
    e.WEBHOOK_ALLOWED_NETWORKS.length > 0 ? e.WEBHOOK_ALLOWED_NETWORKS : production ? [] : ['127.0.0.0/8', '::1/128']
  const allowedNetworks: [ipaddr.IPv4 | ipaddr.IPv6, number][] = []
  for (const cidr of networks) {
    try {
      allowedNetworks.push(ipaddr.parseCIDR(cidr))
    } catch {
      problems.push(`WEBHOOK_ALLOWED_NETWORKS: "${cidr}" is not a CIDR such as 10.0.0.0/8`)
    }
  }
  const delays = (
    e.WEBHOOK_RETRY_DELAYS_SECONDS.length > 0 ? e.WEBHOOK_RETRY_DELAYS_SECONDS : RETRY_DELAYS_SECONDS.split(',')
  ).map(Number)
  if (delays.some((delay) => !Number.isInteger(delay) || delay < 0)) {
    problems.push('WEBHOOK_RETRY_DELAYS_SECONDS: whole seconds, comma-separated')
  }
  return {
    allowedNetworks,
    /** Production delivers only over https. */
    httpsOnly: production,
    retryDelaysMs: delays.map((seconds) => seconds * 1000),
    timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    dispatchIntervalMs: e.WEBHOOK_DISPATCH_INTERVAL_MS,
    disableAfterMs: e.WEBHOOK_DISABLE_AFTER_HOURS * 3_600_000,
    logRetentionDays: e.WEBHOOK_LOG_RETENTION_DAYS,
  }
}

export type WebhookSettings = ReturnType<typeof webhookSettings>
