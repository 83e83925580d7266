// The cached verify answer as the verify benches' floors send it: the same bytes with the same headers.
import type { AppInstance } from '../src/api/app-types.ts'

/** Headers that belong to the answer (not to the connection): a floor sending fewer would be cheaper for it. */
const ANSWER_HEADERS = [
  'access-control-allow-origin',
  'access-control-expose-headers',
  'cache-control',
  'content-type',
  'etag',
  'vary',
  'x-content-type-options',
]

export interface VerifyAnswer {
  body: string
  headers: Record<string, string>
}

export async function captureVerifyAnswer(app: AppInstance, txHash: string): Promise<VerifyAnswer> {
  const response = await app.inject(`/api/verify/${txHash}`)
  if (response.statusCode !== 200) throw new Error(`verify answered ${response.statusCode}`)
  return {
    body: response.body,
    headers: Object.fromEntries(
      ANSWER_HEADERS.filter((name) => response.headers[name] !== undefined).map((name) => [
        name,
        String(response.headers[name]),
      ]),
    ),
  }
}
