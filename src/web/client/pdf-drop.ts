// "Check the PDF itself": a file picker and a drop zone. The file is read here, in the browser, and never sent
// anywhere; the checking code (@docanchor/client's, shared with the CLI) is fetched from this site only once a file
// is chosen.
import {
  DEVELOPMENT_CHAIN_ID,
  describeChanges,
  MAX_PDF_BYTES,
  type PdfCheckResult,
  type PdfErrorCode,
  type PdfSignatureCheck,
  type RevisionNote,
  type SignatureCheck,
} from '@docanchor/client'
import type { ApiClient } from './api-client.ts'
import { h, type Phrase, untrusted } from './dom.ts'
import { identityVerdict } from './identity-text.ts'
import { formatLocal, formatUtc } from './time-format.ts'

const UNREADABLE: Record<PdfErrorCode, string> = {
  ERR_NOT_PDF: 'This file is not a PDF.',
  ERR_PDF_PASSWORD: 'This PDF opens only with a password, so this page cannot read its signatures.',
  ERR_PDF_DAMAGED: 'This PDF is damaged: its structure cannot be read.',
  ERR_PDF_UNSUPPORTED: 'This PDF is built in a way this page cannot check.',
  ERR_PDF_MODIFIED: 'This PDF was changed after it was signed.',
}

// A matching hash says only that the signed bytes are intact: what the document shows is judged with its changes.
const DOCUMENT_HASH: Record<Exclude<SignatureCheck['documentHash'], 'match'>, string> = {
  mismatch: 'The document’s bytes are NOT what was signed: the file was changed.',
  unknown: 'Which bytes this signature covers cannot be told.',
}

const ANCHOR: Record<SignatureCheck['anchor'], string> = {
  found: 'It is recorded on the blockchain.',
  'not-found': 'It is NOT recorded on the blockchain.',
  mismatch: 'The blockchain records something else for it.',
}

/**
 * `qrTxHash`: the transaction this page's QR code names (lower-case), or undefined on a page without one; a dropped
 * PDF none of whose signatures is that one is said to be another document.
 */
export function setUpPdfCheck(api: ApiClient, container: HTMLElement, qrTxHash: string | undefined): void {
  const input = container.querySelector<HTMLInputElement>('input[type="file"]')
  const zone = container.querySelector<HTMLElement>('.dropzone')
  const result = container.querySelector<HTMLElement>('.pdf-result')
  if (!input || !zone || !result) return

  const check = async (file: File) => {
    result.setAttribute('aria-busy', 'true')
    result.replaceChildren(h('p', {}, 'Checking ', untrusted(file.name), '…'))
    try {
      result.replaceChildren(...(await checkFile(api, file, qrTxHash)))
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

async function checkFile(api: ApiClient, file: File, qrTxHash: string | undefined): Promise<HTMLElement[]> {
  // Refused before it is read: the whole file is held in memory while it is checked.
  if (file.size > MAX_PDF_BYTES) {
    return [failure(`This file is larger than ${MAX_PDF_BYTES / 1024 / 1024} MB, the most this page checks.`)]
  }
  const [{ checkPdf }, bytes, info] = await Promise.all([import('./pdf-check.ts'), file.arrayBuffer(), api.info()])
  // This page's own address is the QR URL of one signature: it opens that one even if the PDF does not carry it.
  const outcome = await checkPdf(
    new Uint8Array(bytes),
    api,
    [window.location.href],
    info?.pdfCertificates ?? { service: [], timestamps: [] },
  )
  switch (outcome.kind) {
    case 'unreadable':
      return [failure(UNREADABLE[outcome.code])]
    case 'timed-out':
      return [failure(UNREADABLE.ERR_PDF_DAMAGED)]
    case 'lookup-failed':
      return [failure('The blockchain records could not be looked up right now; try again in a minute.')]
    case 'checked':
      // The embedded default's chain: its CA is a development one, which the words below say.
      return renderResult(file.name, outcome.result, qrTxHash, info?.chainId === DEVELOPMENT_CHAIN_ID)
  }
}

function failure(text: string): HTMLElement {
  return h('p', { class: 'pdf-failure' }, text)
}

/** The signature's identity in the QR page's words: attested, only claimed, or contradicted by the attestation. */
function identityWords(check: SignatureCheck): Phrase {
  const { signature } = check
  if (!check.identity) return ['Who signed cannot be told: no signer details could be tied to this signature.']
  return identityVerdict({ e: signature.signer_email, tr: signature.trust, v: signature.verified }, check.identity)
}

function signatureItem(check: SignatureCheck, development: boolean): HTMLElement {
  const { signature } = check
  const seconds = Math.floor(Date.parse(signature.timestamp) / 1000)
  return h(
    'li',
    {
      class: check.valid ? 'pdf-ok' : 'pdf-bad',
      'data-valid': String(check.valid),
      'data-identity': check.identity?.state ?? 'unchecked',
      'data-changed': String(check.changes.length > 0),
    },
    h(
      'p',
      {},
      h('strong', {}, `${check.valid ? 'Valid' : 'Not valid'}: `, untrusted(signature.signer_name)),
      ' (',
      untrusted(signature.signer_email),
      `), signed ${formatLocal(seconds)} (${formatUtc(seconds)}).`,
    ),
    h('p', { class: 'pdf-identity' }, ...identityWords(check)),
    h('p', { class: 'pdf-shown' }, ...shownWords(check), ` ${ANCHOR[check.anchor]}`),
    h(
      'p',
      { class: 'pdf-signature', 'data-pdf-signature': check.pdfSignature?.status ?? 'none' },
      ...pdfSignatureWords(check.pdfSignature, development),
    ),
    check.problems.length > 0
      ? h('ul', { class: 'problems' }, ...check.problems.map((problem) => h('li', {}, untrusted(problem))))
      : null,
  )
}

/**
 * Whether what the file shows is what was signed: its signed bytes intact, and nothing shown changed by its own
 * revision or a later one. Intact bytes alone never read as success: a later revision can paint over them.
 */
function shownWords(check: SignatureCheck): Phrase {
  if (check.documentHash !== 'match') return [DOCUMENT_HASH[check.documentHash]]
  if (check.changes.length > 0) {
    return [
      'The bytes it signed are intact, but the document was changed afterwards (',
      untrusted(describeChanges(check.changes).replace(/'s\b/g, '’s')),
      '): what you see is not what ',
      untrusted(check.signature.signer_name),
      ' signed.',
    ]
  }
  if (check.valid) {
    return [
      'What you see is what was signed: the document’s bytes are exactly what was signed, and nothing shown changed afterwards.',
    ]
  }
  return ['The bytes it signed are intact, but that alone does not make it valid: see the problems below.']
}

/** A change after the first signature that alters nothing a reader shows (document information, XMP metadata). */
function noteItem(note: RevisionNote): HTMLElement {
  return h(
    'li',
    { 'data-revision': note.revision },
    `Revision ${note.revision} changed `,
    untrusted(note.what.replace(/'s\b/g, '’s')),
    ', which changes nothing shown.',
  )
}

/**
 * Whether the bytes after the last signature may change something shown. The checker (check-signed-pdf.ts) raises a
 * problem for bytes outside any revision and for a later revision that changes anything, so a valid result's later
 * bytes only add what may follow a signature. An invalid result vouches for nothing: a later revision whose structure
 * is ambiguous, say, changes nothing the checker can name, but is no harmless addition either.
 */
function unsignedBytesChangeSomething(result: PdfCheckResult): boolean {
  return result.unsignedBytes !== null && !result.valid
}

/** What the signature's PDF signature (the one readers show) says: valid, by whom, timestamped when and by whom. */
function pdfSignatureWords(pdfSignature: PdfSignatureCheck | null, development: boolean): Phrase {
  if (!pdfSignature) return ['It carries no PDF signature: it was made before the service added them.']
  if (pdfSignature.status !== 'valid') return ['Its PDF signature is NOT valid.']
  const by = pdfSignature.certifiedByService
    ? `the certificate the service issued ${pdfSignature.signerEmail ?? 'its signer'}`
    : 'a certificate the service did not issue'
  const { timestamp } = pdfSignature
  const when = timestamp
    ? [
        `, timestamped ${formatLocal(Math.floor(Date.parse(timestamp.time) / 1000))} by `,
        untrusted(timestamp.authority ?? 'an unnamed authority'),
      ]
    : [', without a timestamp']
  return [
    `Its PDF signature is valid: made with ${by} (`,
    untrusted(pdfSignature.signer?.commonName ?? ''),
    ')',
    ...when,
    '.',
    development && pdfSignature.certifiedByService
      ? ' The service’s certificates here are development ones, which no PDF reader trusts.'
      : '',
  ]
}

/** Another product's PDF signature, checked all the same. */
function otherSignatureItem(other: PdfSignatureCheck): HTMLElement {
  const name = other.name === null ? ['A PDF signature'] : ['The PDF signature ', untrusted(`“${other.name}”`)]
  const verdict: Phrase =
    other.status === 'valid'
      ? [
          ' is valid, signed by ',
          untrusted(other.signer?.commonName ?? 'an unnamed signer'),
          other.trusted ? '.' : ', whose certificate this page cannot vouch for.',
        ]
      : other.status === 'invalid'
        ? [' is NOT valid: ', untrusted(other.problems.join('; ')), '.']
        : [' is of a kind this page does not check.']
  return h(
    'li',
    { class: other.status === 'invalid' ? 'pdf-bad' : 'pdf-other', 'data-status': other.status },
    ...name,
    ...verdict,
  )
}

function renderResult(
  fileName: string,
  result: PdfCheckResult,
  qrTxHash: string | undefined,
  development: boolean,
): HTMLElement[] {
  const count = result.signatures.length
  const name = untrusted(fileName)
  const heading = result.valid
    ? [name, `: ${count === 1 ? 'its signature checks out' : `all ${count} signatures check out`}`]
    : [name, ': not everything checks out']
  const unsigned = result.unsignedBytes
  // A valid file is no evidence for this QR code when none of its signatures is the one the code names.
  const otherDocument =
    qrTxHash !== undefined &&
    count > 0 &&
    !result.signatures.some((check) => check.signature.tx_hash.toLowerCase() === qrTxHash)
  return [
    otherDocument
      ? h(
          'p',
          { class: 'pdf-other-document', role: 'alert' },
          h('strong', {}, 'This is not the document this QR code belongs to. '),
          'None of its signatures is the one this page verifies, so what follows says nothing about the signature above.',
        )
      : null,
    h('h3', { 'data-valid': String(result.valid) }, ...heading),
    count > 0
      ? h('ol', { class: 'pdf-signatures' }, ...result.signatures.map((check) => signatureItem(check, development)))
      : null,
    result.otherSignatures.length > 0 ? h('h4', {}, 'Signatures made with other products') : null,
    result.otherSignatures.length > 0
      ? h('ul', { class: 'pdf-other-signatures' }, ...result.otherSignatures.map(otherSignatureItem))
      : null,
    count === 0
      ? failure('This PDF carries no signatures made with this service.')
      : unsigned
        ? unsignedBytesChangeSomething(result)
          ? h(
              'p',
              { class: 'pdf-bad', 'data-unsigned-bytes': String(unsigned.length), 'data-unsigned-changes': 'true' },
              `The file was changed after the last signature: ${unsigned.length} bytes were added that no signature covers.`,
            )
          : h(
              'p',
              { class: 'pdf-ok', 'data-unsigned-bytes': String(unsigned.length), 'data-unsigned-changes': 'false' },
              `The ${unsigned.length} bytes added after the last signature change nothing shown: they hold only validation data, timestamps, signatures or metadata.`,
            )
        : h('p', { class: 'pdf-ok' }, 'Nothing was added to the file after the last signature.'),
    result.notes.length > 0 ? h('ul', { class: 'pdf-notes' }, ...result.notes.map(noteItem)) : null,
  ].filter((element): element is HTMLElement => element !== null)
}
