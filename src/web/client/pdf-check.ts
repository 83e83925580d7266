// Loaded only once a visitor picks a PDF: hands the file to a worker of its own (pdf-check-worker.ts), which runs
// @docanchor/client's checker on it, and answers the worker's anchor lookups through this page's verify endpoint. The
// file itself is never sent anywhere. A worker still reading after READ_TIMEOUT_MS is ended and the file called
// damaged: the tab stays responsive whatever the file holds.
import type { ApiClient, PdfCertificates } from './api-client.ts'
import type { FromPdfCheckWorker, ToPdfCheckWorker, WorkerOutcome } from './pdf-check-worker.ts'

export type PdfCheckOutcome =
  | WorkerOutcome
  /** The file took longer to read than any honest PDF of its size does. */
  | { kind: 'timed-out' }

/** A 100 MB file reads in a few seconds; anything still reading after this is hostile or broken. */
const READ_TIMEOUT_MS = 20_000

/**
 * `qrUrls`: QR URLs the visitor already holds (this page's own address) for signatures whose metadata has none.
 * `certificates`: the service's signer CA and its time-stamping authorities' roots (PEM, from /api/info).
 */
export function checkPdf(
  bytes: Uint8Array,
  api: ApiClient,
  qrUrls: string[],
  certificates: PdfCertificates,
): Promise<PdfCheckOutcome> {
  const worker = new Worker(new URL('./pdf-check-worker.ts', import.meta.url), { type: 'module' })
  const send = (message: ToPdfCheckWorker, transfer: Transferable[] = []) => worker.postMessage(message, transfer)
  return new Promise<PdfCheckOutcome>((resolve) => {
    const timer = setTimeout(() => resolve({ kind: 'timed-out' }), READ_TIMEOUT_MS)
    worker.onmessage = async ({ data: message }: MessageEvent<FromPdfCheckWorker>) => {
      if (message.type === 'read') clearTimeout(timer)
      else if (message.type === 'done') {
        clearTimeout(timer)
        resolve(message.outcome)
      } else {
        const answer = await api.verify(message.txHash.toLowerCase()).catch(() => undefined)
        if (answer?.kind === 'found') send({ type: 'anchor', id: message.id, record: answer.record })
        else if (answer?.kind === 'not-found') send({ type: 'anchor', id: message.id, record: null })
        else send({ type: 'anchor-failed', id: message.id })
      }
    }
    // A worker that dies (out of memory, a script that does not load) leaves a file this page cannot read.
    worker.onerror = () => {
      clearTimeout(timer)
      resolve({ kind: 'unreadable', code: 'ERR_PDF_DAMAGED' })
    }
    send({ type: 'check', bytes, qrUrls, certificates }, [bytes.buffer as ArrayBuffer])
  }).finally(() => worker.terminate())
}
