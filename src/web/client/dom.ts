// A tiny element builder. Text always goes in as text nodes, never as HTML: signer names and e-mail addresses come
// from a decrypted payload and must never become markup.

export type Child = Node | string | number | null | undefined | false
export type Attributes = Record<string, string | number | boolean | undefined>

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
    parent.appendChild(typeof child === 'object' ? child : document.createTextNode(String(child)))
  }
}

/** Text for screen readers only (e.g. "opens in a new tab"). */
export function srOnly(text: string): HTMLSpanElement {
  return h('span', { class: 'sr-only' }, text)
}
