// The verification page's entry: read the link, check it, show the verdict, then offer the PDF check.
import './page.css'
import { createApiClient } from './api-client.ts'
import { setUpPdfCheck } from './pdf-drop.ts'
import { renderLoading, renderVerdict } from './render.ts'
import { parseLink, verifyLink } from './verify-flow.ts'

/** '' (this origin) or an absolute http(s) URL, from `<meta name="api-base">`; anything else falls back to ''. */
function apiBase(): string {
  const value = document.querySelector<HTMLMetaElement>('meta[name="api-base"]')?.content.trim() ?? ''
  return /^https?:\/\/[^\s?#]+$/i.test(value) ? value.replace(/\/+$/, '') : ''
}

function slot(id: string): HTMLElement {
  const element = document.getElementById(id)
  if (!element) throw new Error(`the page has no #${id}`)
  return element
}

const api = createApiClient(apiBase())
const verdictSlot = slot('verdict-slot')
const details = slot('details')

async function check(): Promise<void> {
  const link = parseLink(window.location.pathname, window.location.hash)
  const info = api.info()
  const verdict = await verifyLink(link, api)
  const txHash = 'record' in verdict ? verdict.record.txHash : undefined
  const loadSuccessors = txHash ? (offset: number) => api.successorPage(txHash, offset) : undefined
  renderVerdict(verdict, await info, verdictSlot, details, loadSuccessors)
  performance.mark('verdict-rendered')
}

// Pasting the missing key into the address bar changes only the fragment: check again without a reload.
window.addEventListener('hashchange', () => {
  renderLoading(verdictSlot, details)
  void check()
})
setUpPdfCheck(api, slot('pdf-check'), parseLink(window.location.pathname, '').txHash?.toLowerCase())
void check()
