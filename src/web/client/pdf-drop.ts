// "Check the PDF itself": a file picker and a drop zone. The file is read here, in the browser, and never sent
// anywhere; the checking code (@docanchor/client's, shared with the CLI) is fetched from this site only once a file
// is chosen.
import type { PdfCheckResult, PdfErrorCode, SignatureCheck } from '@docanchor/client'
import type { ApiClient } from './api-client.ts'
import { h } from './dom.ts'
import { formatLocal, formatUtc } from './time-format.ts'

/** Larger files are refused before they are read: the whole file is held in memory while it is checked. */
const MAX_PDF_BYTES = 100 * 1024 * 1024

const UNREADABLE: Record<PdfErrorCode, string> = {
  ERR_NOT_PDF: 'This file is not a PDF.',
  ERR_PDF_ENCRYPTED: 'This PDF is password-protected, so its signatures cannot be read.',
  ERR_PDF_DAMAGED: 'This PDF is damaged: its structure cannot be read.',
  ERR_PDF_UNSUPPORTED: 'This PDF is built in a way this page cannot check.',
}

const DOCUMENT_HASH: Record<SignatureCheck['documentHash'], string> = {
  match: 'The document’s bytes are exactly what was signed.',
  mismatch: 'The document’s bytes are NOT what was signed: the file was changed.',
  unknown: 'Which bytes this signature covers cannot be told.',
}

const ANCHOR: Record<SignatureCheck['anchor'], string> = {
  found: 'It is recorded on the blockchain.',
  'not-found': 'It is NOT recorded on the blockchain.',
  mismatch: 'The blockchain records something else for it.',
}

export function setUpPdfCheck(api: ApiClient, container: HTMLElement): void {
  const input = container.querySelector<HTMLInputElement>('input[type="file"]')
  const zone = container.querySelector<HTMLElement>('.dropzone')
  const result = container.querySelector<HTMLElement>('.pdf-result')
  if (!input || !zone || !result) return

  const check = async (file: File) => {
    result.setAttribute('aria-busy', 'true')
    result.replaceChildren(h('p', {}, `Checking ${file.name}…`))
    try {
      result.replaceChildren(...(await checkFile(api, file)))
    } catch {
      result.replaceChildren(failure('The file could not be checked.'))
    } finally {
      result.removeAttribute('aria-busy')
    }
  }

  input.addEventListener('change', () => {
    const file = input.files?.[0]
    if (file) void check(file)
  })
  // The whole page takes a drop, so a file dropped beside the zone is checked instead of opened by the browser.
  const hasFiles = (event: DragEvent) => event.dataTransfer?.types.includes('Files') ?? false
  document.addEventListener('dragover', (event) => {
    if (!hasFiles(event)) return
    event.preventDefault()
    zone.classList.add('dragging')
  })
  document.addEventListener('dragleave', (event) => {
    if (event.relatedTarget === null) zone.classList.remove('dragging')
  })
  document.addEventListener('drop', (event) => {
    if (!hasFiles(event)) return
    event.preventDefault()
    zone.classList.remove('dragging')
    const file = event.dataTransfer?.files[0]
    if (file) void check(file)
  })
}

async function checkFile(api: ApiClient, file: File): Promise<HTMLElement[]> {
  if (file.size > MAX_PDF_BYTES) {
    return [failure(`This file is larger than ${MAX_PDF_BYTES / 1024 / 1024} MB, the most this page checks.`)]
  }
  const [{ checkPdf }, bytes] = await Promise.all([import('./pdf-check.ts'), file.arrayBuffer()])
  // This page's own address is the QR URL of one signature: it opens that one even if the PDF does not carry it.
  const outcome = await checkPdf(new Uint8Array(bytes), api, [window.location.href])
  switch (outcome.kind) {
    case 'unreadable':
      return [failure(UNREADABLE[outcome.code])]
    case 'lookup-failed':
      return [failure('The blockchain records could not be looked up right now; try again in a minute.')]
    case 'checked':
      return renderResult(file.name, outcome.result)
  }
}

function failure(text: string): HTMLElement {
  return h('p', { class: 'pdf-failure' }, text)
}

function signatureItem(check: SignatureCheck): HTMLElement {
  const { signature } = check
  const seconds = Math.floor(Date.parse(signature.timestamp) / 1000)
  return h(
    'li',
    { class: check.valid ? 'pdf-ok' : 'pdf-bad', 'data-valid': String(check.valid) },
    h(
      'p',
      {},
      h('strong', {}, `${check.valid ? 'Valid' : 'Not valid'}: ${signature.signer_name}`),
      ` (${signature.signer_email}), signed ${formatLocal(seconds)} (${formatUtc(seconds)}).`,
    ),
    h('p', {}, `${DOCUMENT_HASH[check.documentHash]} ${ANCHOR[check.anchor]}`),
    check.problems.length > 0
      ? h('ul', { class: 'problems' }, ...check.problems.map((problem) => h('li', {}, problem)))
      : null,
  )
}

function renderResult(fileName: string, result: PdfCheckResult): HTMLElement[] {
  const count = result.signatures.length
  const heading = result.valid
    ? `${fileName}: ${count === 1 ? 'its signature checks out' : `all ${count} signatures check out`}`
    : `${fileName}: not everything checks out`
  const unsigned = result.unsignedBytes
  return [
    h('h3', { 'data-valid': String(result.valid) }, heading),
    count > 0 ? h('ol', { class: 'pdf-signatures' }, ...result.signatures.map(signatureItem)) : null,
    count === 0
      ? failure('This PDF carries no signatures made with this service.')
      : unsigned
        ? h(
            'p',
            { class: 'pdf-bad', 'data-unsigned-bytes': String(unsigned.length) },
            `The file was changed after the last signature: ${unsigned.length} bytes were added that no signature covers.`,
          )
        : h('p', { class: 'pdf-ok' }, 'Nothing was added to the file after the last signature.'),
  ].filter((element): element is HTMLElement => element !== null)
}
