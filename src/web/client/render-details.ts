// The sections under the verdict: who signed (only when verified), the document fingerprint, the whole chain of
// signatures with this QR code's place in it, and the values anyone can check on the blockchain without us.
import { type AnchorPayload, DEVELOPMENT_CHAIN_ID, type IdentityDecision } from '@docanchor/client'
import type { ServiceInfo, SuccessorPage } from './api-client.ts'
import { type Child, h, srOnly, untrusted } from './dom.ts'
import { identityFact, NOT_ATTESTED_NOTE } from './identity-text.ts'
import { formatLocal, formatUtc, toDate } from './time-format.ts'
import type { ChainEntry, VerifyRecord } from './verify-record.ts'

function row(term: string, ...description: Child[]): HTMLElement[] {
  return [h('dt', {}, term), h('dd', {}, ...description)]
}

function time(unixSeconds: number): HTMLElement {
  return h(
    'span',
    { class: 'time' },
    h('time', { datetime: toDate(unixSeconds).toISOString() }, formatLocal(unixSeconds)),
    h('span', { class: 'utc' }, formatUtc(unixSeconds)),
  )
}

function code(value: string): HTMLElement {
  return h('code', { class: 'hash' }, value)
}

/** An explorer link when the service names an http(s) explorer, else the bare hash. */
function txLink(txHash: string, info: ServiceInfo | undefined): HTMLElement {
  const template = info?.explorerTxUrl
  if (template) {
    try {
      const url = new URL(template.replaceAll('{txHash}', txHash))
      if (url.protocol === 'https:' || url.protocol === 'http:') {
        return h(
          'a',
          { href: url.href, class: 'hash', target: '_blank', rel: 'noopener noreferrer' },
          txHash,
          srOnly(' (opens the blockchain explorer in a new tab)'),
        )
      }
    } catch {
      // An unusable template: fall through to the bare hash.
    }
  }
  return code(txHash)
}

function section(id: string, title: string, ...children: Child[]): HTMLElement {
  return h('section', { 'aria-labelledby': id, class: 'card' }, h('h2', { id }, title), ...children)
}

function location(latitude: number, longitude: number): HTMLElement {
  const text = `${Math.abs(latitude)}° ${latitude < 0 ? 'S' : 'N'}, ${Math.abs(longitude)}° ${longitude < 0 ? 'W' : 'E'}`
  // A geo: link opens the visitor's own maps app; the page itself loads no map tiles from anywhere.
  return h('span', {}, text, ' ', h('a', { href: `geo:${latitude},${longitude}` }, 'Open in a maps app'))
}

export function signerSection(payload: AnchorPayload, record: VerifyRecord, identity: IdentityDecision): HTMLElement {
  const { s: signer, g } = payload
  const emailDenied = identity.mismatches.includes('email')
  return section(
    'signer-title',
    'Signer',
    h('p', { class: 'note' }, NOT_ATTESTED_NOTE),
    h(
      'dl',
      { class: 'facts', 'data-identity': identity.state },
      ...row('Name', h('strong', {}, untrusted(signer.n))),
      ...row(
        'E-mail',
        untrusted(signer.e),
        emailDenied ? h('span', { class: 'note' }, 'not the account that anchored this signature') : null,
      ),
      ...row('Signed as', signer.t === 'company' ? 'A company' : 'An individual'),
      ...(signer.c ? row('Company', untrusted(signer.c)) : []),
      ...(signer.p ? row('Position', untrusted(signer.p)) : []),
      ...row('Identity', identityFact(signer, identity)),
      ...row('Signed at', time(payload.ts), h('span', { class: 'note' }, 'as stated by the signer’s device')),
      ...row('Recorded on the blockchain', time(record.timestamp)),
      ...(g ? row('Location', location(g.la, g.ln)) : []),
    ),
  )
}

export function documentSection(payload: AnchorPayload): HTMLElement {
  return section(
    'document-title',
    'Document',
    h(
      'dl',
      { class: 'facts' },
      ...row(
        'Fingerprint (SHA-256)',
        code(payload.d),
        h(
          'span',
          { class: 'note' },
          'of the PDF as it was before the QR code was added. Check the PDF below to compare.',
        ),
      ),
    ),
  )
}

function chainItem(entry: ChainEntry, label: string, info: ServiceInfo | undefined, current: boolean): HTMLElement {
  return h(
    'li',
    { class: current ? 'current' : undefined, 'aria-current': current ? 'true' : undefined },
    h(
      'p',
      { class: 'chain-label' },
      h('strong', {}, label),
      current ? h('span', { class: 'badge' }, 'This QR code') : null,
    ),
    h(
      'dl',
      { class: 'facts compact' },
      ...row('Recorded', time(entry.timestamp)),
      ...row('Transaction', txLink(entry.txHash, info)),
    ),
  )
}

/** Loads the successors past the first `offset` (the service's `GET …/successors`); undefined when it failed. */
export type LoadSuccessors = (offset: number) => Promise<SuccessorPage | undefined>

export function chainSection(
  record: VerifyRecord,
  info: ServiceInfo | undefined,
  title = 'Signatures on this document',
  loadSuccessors?: LoadSuccessors,
): HTMLElement {
  const total = record.chain.length
  const intro =
    total === 1
      ? 'This is the document’s first signature.'
      : `This is signature ${total} of the document; the earlier ones are listed first. Their details can be read only with their own QR codes.`
  const { successors, moreSuccessors } = record
  const known = successors.length + moreSuccessors
  const list = h(
    'ol',
    { class: 'chain', start: total + 1 },
    ...successors.map((entry) => chainItem(entry, `Signature ${total + 1}`, info, false)),
  )
  return section(
    'chain-title',
    title,
    h('p', {}, intro),
    info?.chainId === DEVELOPMENT_CHAIN_ID
      ? h(
          'p',
          { class: 'development-chain' },
          'Chain 31337 is a development chain on the service’s own machine (its embedded default), not a public ' +
            'record: these signatures prove nothing to anyone else.',
        )
      : null,
    h(
      'ol',
      { class: 'chain' },
      ...record.chain.map((entry, index) => chainItem(entry, `Signature ${index + 1}`, info, index === total - 1)),
    ),
    successors.length > 0 || moreSuccessors > 0
      ? h(
          'div',
          {},
          h('h3', {}, 'Signed after this one'),
          known > 1
            ? h(
                'p',
                {},
                `${known} later signatures continue from this one: the chain branches, so copies of the document differ.`,
              )
            : h('p', {}, 'The document was signed again after this signature; the later version has its own QR code.'),
          list,
          moreSuccessors > 0 && loadSuccessors
            ? moreSuccessorsControl(moreSuccessors, successors.length, loadSuccessors, (entries) =>
                list.append(...entries.map((entry) => chainItem(entry, `Signature ${total + 1}`, info, false))),
              )
            : null,
        )
      : null,
  )
}

/**
 * Anyone may anchor after any document, so a flood of anchors naming this one could push the real countersignature
 * past the first ones listed: the rest are counted and shown on request, never dropped in silence.
 */
function moreSuccessorsControl(
  count: number,
  offset: number,
  load: LoadSuccessors,
  show: (entries: ChainEntry[]) => void,
): HTMLElement {
  const note = h(
    'p',
    { class: 'more-successors' },
    `${count} more not listed above: the first ones anchored are shown. Anyone can anchor after any document, so ` +
      'look for the signer you expect among all of them.',
  )
  const button = h('button', { type: 'button', class: 'more-successors' }, `Show the other ${count}`)
  let next: number | null = offset
  button.addEventListener('click', async () => {
    if (next === null) return
    button.setAttribute('disabled', '')
    const page = await load(next)
    button.removeAttribute('disabled')
    if (!page) {
      button.textContent = 'They could not be loaded: try again'
      return
    }
    show(page.successors)
    next = page.nextOffset
    if (next === null) button.remove()
    else button.textContent = 'Show more'
  })
  return h('div', {}, note, button)
}

export function technicalSection(record: VerifyRecord, info: ServiceInfo | undefined): HTMLElement {
  return section(
    'technical-title',
    'Check it yourself',
    h(
      'p',
      {},
      'These values let anyone confirm this signature on the blockchain without trusting this service: the transaction’s DocumentAnchored event holds the composite hash.',
    ),
    h(
      'dl',
      { class: 'facts' },
      ...(info ? row('Chain ID', String(info.chainId)) : []),
      ...(info ? row('Contract', code(info.contractAddress)) : []),
      ...row('Transaction', txLink(record.txHash, info)),
      ...row('Composite hash', code(record.compositeHash)),
      ...row('Sent by relayer', code(record.signer)),
    ),
  )
}
