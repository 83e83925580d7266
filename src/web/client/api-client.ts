// The two public endpoints the page calls, through @docanchor/client. Answers are classified into what the visitor
// needs to know; nothing the service says is shown unchecked, and no request carries the key (it lives in the
// fragment, which fetch never sends), a cookie or a referrer (the client sends neither).
import { AnchorApiError, createAnchorClient } from '@docanchor/client'
import { type ChainEntry, parseSuccessorPage, parseVerifyRecord, type VerifyRecord } from './verify-record.ts'

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
  pdfCertificates: PdfCertificates
}

export interface PdfCertificates {
  /** The CA that certifies the signers of PDF signatures (PEM, the issuing CA first). */
  service: string[]
  /** The roots the service's time-stamping authorities chain to (PEM): trusted for timestamps only. */
  timestamps: string[]
}

export interface ApiClient {
  verify(txHash: string): Promise<VerifyAnswer>
  /** Undefined when the service cannot say; the page then shows hashes without explorer links. */
  info(): Promise<ServiceInfo | undefined>
  /** Further successors of `txHash` past the first `offset` (a verification's `moreSuccessors`); undefined on failure. */
  successorPage(txHash: string, offset: number): Promise<SuccessorPage | undefined>
}

export interface SuccessorPage {
  successors: ChainEntry[]
  nextOffset: number | null
}

/** `apiBase` is '' for the page's own origin, or an absolute URL without a trailing slash. */
export function createApiClient(apiBase: string, fetchImpl: typeof fetch = fetch): ApiClient {
  const api = createAnchorClient({ baseUrl: apiBase, fetch: fetchImpl, timeoutMs: REQUEST_TIMEOUT_MS })

  return {
    async verify(txHash) {
      try {
        const record = parseVerifyRecord(await api.verify(txHash))
        return record ? { kind: 'found', record } : { kind: 'unavailable', reason: 'server' }
      } catch (error) {
        return unavailableOrMissing(error)
      }
    },

    async successorPage(txHash, offset) {
      try {
        return parseSuccessorPage(await api.successorPage(txHash, offset))
      } catch {
        return undefined
      }
    },

    async info() {
      try {
        const { chainId, contractAddress, explorerTxUrl, pdfSigning } = await api.info()
        return {
          chainId,
          contractAddress,
          explorerTxUrl,
          pdfCertificates: { service: pdfSigning.certificates, timestamps: pdfSigning.timestampCertificates },
        }
      } catch {
        return undefined
      }
    },
  }
}

function unavailableOrMissing(error: unknown): VerifyAnswer {
  if (!(error instanceof AnchorApiError)) return { kind: 'unavailable', reason: 'network' }
  if (error.status === 404 && error.code === 'ANCHOR_NOT_FOUND') return { kind: 'not-found' }
  if (error.status === 400) return { kind: 'invalid-id' }
  if (error.status === 422) return { kind: 'unavailable', reason: 'too-deep' }
  if (error.status === 429 || error.status === 503) {
    return {
      kind: 'unavailable',
      reason: 'busy',
      ...(error.retryAfter ? { retryAfterSeconds: error.retryAfter } : {}),
    }
  }
  if (error.status === 502) return { kind: 'unavailable', reason: 'chain' }
  return { kind: 'unavailable', reason: 'server' }
}
