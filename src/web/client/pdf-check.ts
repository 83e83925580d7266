// Loaded only once a visitor picks a PDF: runs @docanchor/client's checker (the one the CLI runs) on the file's
// bytes, with this page's verify endpoint as the source of anchors. The file itself is never sent anywhere.
import { type AnchorRecord, checkSignedPdf, type PdfCheckResult, PdfError, type PdfErrorCode } from '@docanchor/client'
import type { ApiClient } from './api-client.ts'

export type PdfCheckOutcome =
  | { kind: 'checked'; result: PdfCheckResult }
  | { kind: 'unreadable'; code: PdfErrorCode }
  /** An anchor lookup failed (service or chain unavailable): nothing can be said about the signatures. */
  | { kind: 'lookup-failed' }

class LookupFailedError extends Error {}

/** `qrUrls`: QR URLs the visitor already holds (this page's own address) for signatures whose metadata has none. */
export async function checkPdf(bytes: Uint8Array, api: ApiClient, qrUrls: string[]): Promise<PdfCheckOutcome> {
  const verify = async (txHash: string): Promise<AnchorRecord | null> => {
    const answer = await api.verify(txHash.toLowerCase())
    if (answer.kind === 'found') return answer.record
    if (answer.kind === 'not-found') return null
    throw new LookupFailedError()
  }
  try {
    return { kind: 'checked', result: await checkSignedPdf(bytes, { verify, qrUrls }) }
  } catch (error) {
    if (error instanceof PdfError) return { kind: 'unreadable', code: error.code }
    if (error instanceof LookupFailedError) return { kind: 'lookup-failed' }
    return { kind: 'unreadable', code: 'ERR_PDF_DAMAGED' }
  }
}
