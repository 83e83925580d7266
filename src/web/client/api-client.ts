// The two public endpoints the page calls. Answers are classified into what the visitor needs to know; nothing
// the service says is shown unchecked, and no request carries the key (it lives in the fragment, which fetch never
// sends) or a referrer.
import { parseVerifyRecord, type VerifyRecord } from './verify-record.ts'

const REQUEST_TIMEOUT_MS = 20_000

export type UnavailableReason = 'network' | 'chain' | 'busy' | 'too-deep' | 'server'

export type VerifyAnswer =
  | { kind: 'found'; record: VerifyRecord }
  | { kind: 'not-found' }
  | { kind: 'invalid-id' }
  | { kind: 'unavailable'; reason: UnavailableReason; retryAfterSeconds?: number }

export interface ServiceInfo {
  chainId: number
  contractAddress: string
  /** e.g. `https://explorer.example/tx/{txHash}`, or null. */
  explorerTxUrl: string | null
}

export interface ApiClient {
  verify(txHash: string): Promise<VerifyAnswer>
  /** Undefined when the service cannot say; the page then shows hashes without explorer links. */
  info(): Promise<ServiceInfo | undefined>
}

const REQUEST: RequestInit = {
  credentials: 'omit',
  referrerPolicy: 'no-referrer',
  headers: { accept: 'application/json' },
}

/** `apiBase` is '' for the page's own origin, or an absolute URL without a trailing slash. */
export function createApiClient(apiBase: string, fetchImpl: typeof fetch = fetch): ApiClient {
  const get = (path: string) =>
    fetchImpl(`${apiBase}${path}`, { ...REQUEST, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) })

  return {
    async verify(txHash) {
      let response: Response
      try {
        response = await get(`/api/verify/${txHash}`)
      } catch {
        return { kind: 'unavailable', reason: 'network' }
      }
      const body: unknown = await response.json().catch(() => undefined)
      if (response.status === 200) {
        const record = parseVerifyRecord(body)
        return record ? { kind: 'found', record } : { kind: 'unavailable', reason: 'server' }
      }
      if (response.status === 404 && problemCode(body) === 'ANCHOR_NOT_FOUND') return { kind: 'not-found' }
      if (response.status === 400) return { kind: 'invalid-id' }
      if (response.status === 422) return { kind: 'unavailable', reason: 'too-deep' }
      if (response.status === 429 || response.status === 503) {
        const retry = Number(response.headers.get('retry-after'))
        return {
          kind: 'unavailable',
          reason: 'busy',
          ...(Number.isInteger(retry) && retry > 0 ? { retryAfterSeconds: retry } : {}),
        }
      }
      if (response.status === 502) return { kind: 'unavailable', reason: 'chain' }
      return { kind: 'unavailable', reason: 'server' }
    },

    async info() {
      try {
        const response = await get('/api/info')
        if (!response.ok) return undefined
        const body: unknown = await response.json()
        if (typeof body !== 'object' || body === null) return undefined
        const { chainId, contractAddress, explorerTxUrl } = body as Record<string, unknown>
        if (typeof chainId !== 'number' || typeof contractAddress !== 'string') return undefined
        return {
          chainId,
          contractAddress,
          explorerTxUrl: typeof explorerTxUrl === 'string' ? explorerTxUrl : null,
        }
      } catch {
        return undefined
      }
    },
  }
}

function problemCode(body: unknown): unknown {
  return typeof body === 'object' && body !== null ? (body as { code?: unknown }).code : undefined
}
