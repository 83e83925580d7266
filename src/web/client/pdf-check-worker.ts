// Checks a dropped PDF off the page's main thread: @docanchor/client's checker (the one the CLI runs) reads the file
// here, so a hostile one, bounded by the reader's budget (read-budget.ts), costs this worker and never the tab, which
// ends the worker when reading runs too long (pdf-check.ts). Anchors are asked of the page, which holds the API client.
import {
  type AnchorRecord,
  checkSignedPdf,
  type PdfCheckResult,
  PdfError,
  type PdfErrorCode,
  pemCertificates,
  readSignedPdf,
} from '@docanchor/client'
import type { PdfCertificates } from './api-client.ts'

/** From the page: the file, then the answer to each anchor asked for. */
export type ToPdfCheckWorker =
  | { type: 'check'; bytes: Uint8Array; qrUrls: string[]; certificates: PdfCertificates }
  | { type: 'anchor'; id: number; record: AnchorRecord | null }
  | { type: 'anchor-failed'; id: number }

/** To the page: the file is read (what follows is bounded), an anchor is needed, or the outcome. */
export type FromPdfCheckWorker =
  | { type: 'read' }
  | { type: 'anchor'; id: number; txHash: string }
  | { type: 'done'; outcome: WorkerOutcome }

export type WorkerOutcome =
  | { kind: 'checked'; result: PdfCheckResult }
  | { kind: 'unreadable'; code: PdfErrorCode }
  | { kind: 'lookup-failed' }

/** The worker's global scope, as much of it as this file uses (the project's types are the page's, not a worker's). */
declare const self: {
  onmessage: ((event: MessageEvent<ToPdfCheckWorker>) => void) | null
  postMessage(message: FromPdfCheckWorker): void
}

class LookupFailedError extends Error {}

const waiting = new Map<number, (answer: AnchorRecord | null | LookupFailedError) => void>()
let nextId = 0

function lookup(txHash: string): Promise<AnchorRecord | null> {
  const id = nextId++
  return new Promise((resolve, reject) => {
    waiting.set(id, (answer) => (answer instanceof LookupFailedError ? reject(answer) : resolve(answer)))
    self.postMessage({ type: 'anchor', id, txHash })
  })
}

async function check(bytes: Uint8Array, qrUrls: string[], certificates: PdfCertificates): Promise<WorkerOutcome> {
  try {
    const pdf = await readSignedPdf(bytes)
    self.postMessage({ type: 'read' })
    const result = await checkSignedPdf(pdf, {
      verify: lookup,
      qrUrls,
      serviceCertificates: certificates.service.flatMap(pemCertificates),
      timestampCertificates: certificates.timestamps.flatMap(pemCertificates),
    })
    return { kind: 'checked', result }
  } catch (error) {
    if (error instanceof LookupFailedError) return { kind: 'lookup-failed' }
    return { kind: 'unreadable', code: error instanceof PdfError ? error.code : 'ERR_PDF_DAMAGED' }
  }
}

self.onmessage = (event) => {
  const message = event.data
  if (message.type === 'check') {
    void check(message.bytes, message.qrUrls, message.certificates).then((outcome) =>
      self.postMessage({ type: 'done', outcome }),
    )
    return
  }
  const answer = waiting.get(message.id)
  waiting.delete(message.id)
  answer?.(message.type === 'anchor' ? message.record : new LookupFailedError())
}
