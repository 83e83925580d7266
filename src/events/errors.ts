// Why a webhook could not be registered or changed: one base with a stable `code`; src/api/domain-problems.ts maps
// each code to HTTP.
export type WebhookErrorCode = 'ERR_WEBHOOK_URL_REFUSED' | 'ERR_WEBHOOK_LIMIT'

export abstract class WebhookError extends Error {
  abstract readonly code: WebhookErrorCode
}

/** A URL the service may not call: its scheme, or an address outside the public internet and WEBHOOK_ALLOWED_NETWORKS. */
export class WebhookUrlRefusedError extends WebhookError {
  override name = 'WebhookUrlRefusedError'
  readonly code = 'ERR_WEBHOOK_URL_REFUSED'
}

/** The account has as many webhooks as it may. */
export class TooManyWebhooksError extends WebhookError {
  override name = 'TooManyWebhooksError'
  readonly code = 'ERR_WEBHOOK_LIMIT'
}

/** Every webhook failure, so a code names its class. */
export type WebhookErrorType = WebhookUrlRefusedError | TooManyWebhooksError
