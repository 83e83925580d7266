// A tiny element builder. Text always goes in as text nodes, never as HTML: signer names and e-mail addresses come
// from a decrypted payload and must never become markup. What a payload, a PDF or a file name says goes in as
// `untrusted(text)`: its own bidirectional isolate (`<bdi>`), its control and bidirectional formatting characters
// shown as <U+XXXX>, so that an unterminated override in a name cannot reverse the page's sentence around it.
import { escapeDisplayControls } from '@docanchor/client'

/** Text from outside this page's own words. */
export interface UntrustedText {
  readonly untrusted: string
}

export type Child = Node | string | number | UntrustedText | null | undefined | false
export type Attributes = Record<string, string | number | boolean | undefined>

/** Words of the page mixed with untrusted text, in reading order. */
export type Phrase = readonly (string | UntrustedText)[]

export function untrusted(text: string): UntrustedText {
  return { untrusted: text }
}

const FIRST_STRONG_ISOLATE = '\u2068'
const POP_DIRECTIONAL_ISOLATE = '\u2069'

/**
 * A phrase as plain text (the tab's title, which holds no elements): each untrusted part between Unicode isolates,
 * with its own formatting characters escaped so none of them can close the isolate early.
 */
export function plainText(phrase: Phrase): string {
  return phrase
    .map((part) =>
      typeof part === 'string'
        ? part
        : `${FIRST_STRONG_ISOLATE}${escapeDisplayControls(part.untrusted)}${POP_DIRECTIONAL_ISOLATE}`,
    )
    .join('')
}

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue
    element.setAttribute(name, value === true ? '' : String(value))
  }
  append(element, children)
  return element
}

export function append(parent: Node, children: readonly Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue
    if (typeof child === 'object' && 'untrusted' in child) {
      parent.appendChild(h('bdi', {}, escapeDisplayControls(child.untrusted)))
    } else parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Text for screen readers only (e.g. "opens in a new tab"). */
export function srOnly(text: string): HTMLSpanElement {
  return h('span', { class: 'sr-only' }, text)
}
