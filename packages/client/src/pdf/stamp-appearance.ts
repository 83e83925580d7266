// What the stamp shows, drawn upright in its own box: the QR code on a white ground, and under it a two-line caption
// that tells a person holding the paper what the code is ("Signed by Ada Lovelace" / "2026-11-28 · scan to verify").
// The code is drawn as filled squares, not as an image: an upscaled 1-bit image is smoothed by poppler and others
// into grey edges, and the code then needed a 150 dpi render to decode; squares stay sharp at 100 dpi.
import { Standard14Font } from '@libpdf/core'
import QRCode from 'qrcode'

/** The stamp's size for a code of side `size`: the caption's band is added below the code. */
export interface StampLayout {
  width: number
  height: number
  /** Height of the caption's band, under the code. */
  caption: number
  fontSize: number
}

/** Legible on paper at the default 96 pt (7.2 pt type); never larger than 9 pt, nor smaller than 3. */
export function stampLayout(size: number): StampLayout {
  const fontSize = Math.min(9, Math.max(3, size * 0.075))
  const caption = fontSize * 2.8
  return { width: size, height: size + caption, caption, fontSize }
}

/** Quiet zone around the code, in modules, as ISO/IEC 18004 asks for. */
const QUIET_ZONE = 4

export interface QrModules {
  /** Modules per side, the quiet zone included. */
  width: number
  isDark(row: number, column: number): boolean
}

/**
 * The QR code of `text`. Error correction L: the code is printed once, on a page its signature protects, and its
 * fewer, larger modules are what a phone or a 100 dpi scan needs to read it.
 */
export function qrModules(text: string): QrModules {
  const { modules } = QRCode.create(text, { errorCorrectionLevel: 'L' })
  const size = modules.size
  return {
    width: size + 2 * QUIET_ZONE,
    isDark: (row, column) => {
      const r = row - QUIET_ZONE
      const c = column - QUIET_ZONE
      return r >= 0 && c >= 0 && r < size && c < size && Boolean(modules.get(r, c))
    },
  }
}

/** The caption's type: a standard font every reader has, so the file embeds none; its metrics are the library's. */
const HELVETICA = Standard14Font.of('Helvetica')

/** The caption's two lines, each shortened with "…" to fit the stamp's width. */
export function captionLines(signerName: string, time: Date, layout: StampLayout): string[] {
  const date = time.toISOString().slice(0, 10)
  const name = [...signerName].every(isWinAnsi) ? signerName : undefined
  return [name ? `Signed by ${name}` : 'Digitally signed', `${date} · scan to verify`].map((line) =>
    fitted(line, layout),
  )
}

/** Latin-1's printable characters are WinAnsiEncoding's with the same codes; the caption keeps to them. */
function isWinAnsi(character: string): boolean {
  const code = character.codePointAt(0)!
  return (code >= 0x20 && code <= 0x7e) || (code >= 0xa0 && code <= 0xff) || character === '…'
}

function fitted(line: string, { width, fontSize }: StampLayout): string {
  let characters = [...line]
  while (characters.length > 1 && HELVETICA.widthOfTextAtSize(characters.join(''), fontSize) > width) {
    characters = [...characters.slice(0, -2), '…']
  }
  return characters.join('')
}

/** The appearance's content: white ground, the code's dark modules (row runs as rectangles), the centred caption. */
export function stampContent(layout: StampLayout, qr: QrModules, lines: readonly string[], font: string): string {
  const { width, height, caption, fontSize } = layout
  const module = width / qr.width
  const ops = [`q 1 g 0 0 ${n(width)} ${n(height)} re f Q`, 'q 0 g']
  for (let row = 0; row < qr.width; row++) {
    const y = caption + width - (row + 1) * module
    for (let column = 0; column < qr.width; ) {
      if (!qr.isDark(row, column)) {
        column++
        continue
      }
      const start = column
      while (column < qr.width && qr.isDark(row, column)) column++
      ops.push(`${n(start * module)} ${n(y)} ${n((column - start) * module)} ${n(module)} re`)
    }
  }
  ops.push('f Q', `BT /${font} ${n(fontSize)} Tf 0 g`)
  lines.forEach((line, i) => {
    const x = (width - HELVETICA.widthOfTextAtSize(line, fontSize)) / 2
    const baseline = caption - fontSize * (1.05 + i * 1.15)
    ops.push(`1 0 0 1 ${n(Math.max(0, x))} ${n(baseline)} Tm <${winAnsiHex(line)}> Tj`)
  })
  ops.push('ET')
  return ops.join('\n')
}

/** `…` is 0x85 in WinAnsiEncoding; the caption's other characters have their Latin-1 codes. */
function winAnsiHex(text: string): string {
  return [...text]
    .map((character) => (character === '…' ? 0x85 : character.codePointAt(0)!).toString(16).padStart(2, '0'))
    .join('')
}

/** Up to four decimals, no exponent: what a content stream accepts. */
function n(value: number): string {
  return String(Math.round(value * 10_000) / 10_000)
}
