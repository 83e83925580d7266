// Puts a verdict on the page: replaces the verdict banner and the sections below it, and names the tab after it.
import type { ServiceInfo } from './api-client.ts'
import { h, plainText } from './dom.ts'
import {
  chainSection,
  documentSection,
  type LoadSuccessors,
  signerSection,
  technicalSection,
} from './render-details.ts'
import { verdictText } from './verdict-text.ts'
import type { Verdict } from './verify-flow.ts'

const ICONS = { ok: '✓', warn: '!', bad: '✕' } as const

export function renderLoading(verdictSlot: HTMLElement, details: HTMLElement): void {
  verdictSlot.replaceChildren(
    h(
      'section',
      { id: 'verdict', class: 'verdict tone-loading', role: 'status', 'aria-busy': 'true' },
      h('h1', {}, 'Checking this signature…'),
      h('p', {}, 'Reading the record on the blockchain and decrypting the signer’s details on this device.'),
    ),
  )
  details.replaceChildren()
}

export function renderVerdict(
  verdict: Verdict,
  info: ServiceInfo | undefined,
  verdictSlot: HTMLElement,
  details: HTMLElement,
  loadSuccessors?: LoadSuccessors,
): void {
  const text = verdictText(verdict)
  const retry = text.retry ? h('button', { type: 'button', class: 'retry' }, 'Try again') : null
  retry?.addEventListener('click', () => window.location.reload())
  verdictSlot.replaceChildren(
    h(
      'section',
      {
        id: 'verdict',
        class: `verdict tone-${text.tone}`,
        role: text.role,
        'data-state': verdict.kind,
        'data-identity': verdict.kind === 'verified' ? verdict.identity.state : undefined,
      },
      h('span', { class: 'icon', 'aria-hidden': 'true' }, ICONS[text.tone]),
      h('div', {}, h('h1', {}, text.heading), h('p', {}, ...text.body), retry),
    ),
  )
  document.title = plainText([...text.title, ' · Signature check'])

  if (verdict.kind === 'verified') {
    details.replaceChildren(
      signerSection(verdict.payload, verdict.record, verdict.identity),
      documentSection(verdict.payload),
      chainSection(verdict.record, info, undefined, loadSuccessors),
      technicalSection(verdict.record, info),
    )
  } else if ('record' in verdict) {
    details.replaceChildren(
      chainSection(verdict.record, info, 'What the blockchain records', loadSuccessors),
      technicalSection(verdict.record, info),
    )
  } else if (verdict.kind === 'not-found') {
    details.replaceChildren(
      h('p', { class: 'card' }, 'Transaction looked up: ', h('code', { class: 'hash' }, verdict.txHash)),
    )
  } else {
    details.replaceChildren()
  }
}
