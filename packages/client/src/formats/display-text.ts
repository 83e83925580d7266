// Characters that change how the text around them is shown rather than what it says: C0 and C1 controls (a terminal's
// escape sequences, carriage return, line breaks) and the bidirectional embeddings, overrides and isolates, which can
// reverse the rest of a line. New payloads refuse them (field-rules.ts); text read from older files, payloads or a
// service's answers is shown with each of them escaped (a terminal) or isolated (a page).

/** C1 controls, DEL and the bidirectional embeddings, overrides and isolates: what JSON.stringify leaves as it is. */
const BEYOND_C0 = '\\u007F-\\u009F\\u202A-\\u202E\\u2066-\\u2069'
/**
 * Characters that show nothing, so that two names that look the same can differ: the soft hyphen, the combining
 * grapheme joiner, the Arabic letter mark, the Mongolian vowel separator, zero-width spaces, joiners and marks, the
 * word joiner and invisible operators, the byte order mark. Shown as `<U+XXXX>` like the controls, but not refused
 * in new payloads: scripts and emoji sequences join with some of them.
 */
const INVISIBLE = '\\u00AD\\u034F\\u061C\\u180E\\u200B-\\u200F\\u2060-\\u2064\\uFEFF'
const DISPLAY_CONTROL = new RegExp(`[\\u0000-\\u001F${BEYOND_C0}]`)
const DISPLAY_CONTROLS = new RegExp(`[\\u0000-\\u001F${BEYOND_C0}${INVISIBLE}]`, 'g')
const ALL_BUT_NEWLINE = new RegExp(`[\\u0000-\\u0009\\u000B-\\u001F${BEYOND_C0}${INVISIBLE}]`, 'g')
const UNESCAPED_IN_JSON = new RegExp(`[${BEYOND_C0}]`, 'g')

/** The first such character, as U+XXXX, or undefined when there is none. */
export function firstDisplayControl(text: string): string | undefined {
  const found = DISPLAY_CONTROL.exec(text)
  return found ? codePoint(found[0]) : undefined
}

/**
 * The text with each such character, and each invisible one, written as `<U+XXXX>`, line breaks included: one line, shown in its own reading
 * order, that no terminal takes as a command. `keepNewlines` leaves `\n` alone, for whole outputs whose lines were
 * escaped one by one already.
 */
export function escapeDisplayControls(text: string, options: { keepNewlines?: boolean } = {}): string {
  return text.replace(options.keepNewlines ? ALL_BUT_NEWLINE : DISPLAY_CONTROLS, codePointTag)
}

/**
 * JSON text with each such character as a `\uXXXX` escape: JSON.stringify escapes C0 controls itself but leaves C1
 * controls and the bidirectional characters as they are. The same data, which no terminal acts on.
 */
export function escapeDisplayControlsInJson(json: string): string {
  return json.replace(UNESCAPED_IN_JSON, (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`)
}

function codePointTag(character: string): string {
  return `<${codePoint(character)}>`
}

function codePoint(character: string): string {
  return `U+${character.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`
}
