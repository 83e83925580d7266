// Hostile PDFs, made in the tests rather than committed: a few kilobytes each that claim gigabytes (compressed
// streams inflating to hundreds of megabytes, twice over; cross-reference streams declaring millions of entries,
// chained), lengths that refer to themselves, objects nested thousands deep. Node only (zlib).
import { deflateSync } from 'node:zlib'

const latin1 = (text: string) => Buffer.from(text, 'latin1')

/** Deflate (zlib) of `megabytes` MiB of zeros: about a thousandth of that. */
function deflatedZeros(megabytes: number): Buffer {
  return deflateSync(Buffer.alloc(megabytes * 1024 * 1024), { level: 9 })
}

/** The header, then the objects numbered from 1 (each given without its "N 0 obj" wrapper), and where each begins. */
function headerAndObjects(header: string, objects: Buffer[]): { parts: Buffer[]; offsets: number[]; length: number } {
  const parts: Buffer[] = [latin1(header)]
  let length = parts[0]!.length
  const offsets: number[] = []
  for (const [i, body] of objects.entries()) {
    offsets.push(length)
    const object = Buffer.concat([latin1(`${i + 1} 0 obj\n`), body, latin1('\nendobj\n')])
    parts.push(object)
    length += object.length
  }
  return { parts, offsets, length }
}

/** Objects (without their "N 0 obj" wrapper), then a classic cross-reference table and trailer. */
function withTable(objects: Buffer[], trailer: string): Uint8Array {
  const { parts, offsets, length } = headerAndObjects('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', objects)
  const rows = offsets.map((offset) => `${String(offset).padStart(10, '0')} 00000 n \n`).join('')
  parts.push(latin1(`xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${rows}`))
  parts.push(latin1(`trailer\n<< /Size ${objects.length + 1} ${trailer} >>\nstartxref\n${length}\n%%EOF\n`))
  return new Uint8Array(Buffer.concat(parts))
}

const stream = (dict: string, data: Buffer) =>
  Buffer.concat([latin1(`<< ${dict} /Length ${data.length} >>\nstream\n`), data, latin1('\nendstream')])

const PAGES = [latin1('<< /Type /Pages /Kids [] /Count 0 >>')]

/** A metadata stream of `megabytes` MiB of zeros, deflated `times` times over. */
export function flateBomb(megabytes: number, times: 1 | 2): Uint8Array {
  let data = deflatedZeros(megabytes)
  if (times === 2) data = deflateSync(data, { level: 9 })
  const filter = times === 2 ? '/Filter [/FlateDecode /FlateDecode]' : '/Filter /FlateDecode'
  return withTable(
    [
      latin1('<< /Type /Catalog /Pages 2 0 R /AnchorMetadata 3 0 R >>'),
      ...PAGES,
      stream(`/Type /AnchorMetadata ${filter}`, data),
    ],
    '/Root 1 0 R',
  )
}

/** The catalog inside an object stream that inflates to `megabytes` MiB. */
export function objectStreamBomb(megabytes: number): Uint8Array {
  const data = deflatedZeros(megabytes)
  const objects = [
    latin1('<< /Type /Pages /Kids [] /Count 0 >>'),
    stream('/Type /ObjStm /N 1 /First 4 /Filter /FlateDecode', data),
  ]
  // Object 3, the catalog, lives in object stream 2: only a cross-reference stream can say so.
  return withXrefStream(
    objects,
    [
      [1, 0], // pages, at its offset (filled in)
      [1, 0], // the object stream
      [2, 2, 0], // the catalog: compressed, stream 2, index 0
    ],
    '/Root 3 0 R',
  )
}

/** Objects, then a cross-reference stream; `rows`: [type, field2, field3] per object, offsets filled in for type 1. */
function withXrefStream(objects: Buffer[], rows: number[][], trailer: string): Uint8Array {
  const { parts, offsets, length } = headerAndObjects('%PDF-1.7\n', objects)
  const data = Buffer.alloc((rows.length + 1) * 6)
  rows.forEach((row, i) => {
    const at = (i + 1) * 6
    data[at] = row[0]!
    data.writeUInt32BE(row[0] === 1 ? offsets[i]! : row[1]!, at + 1)
    data[at + 5] = row[0] === 1 ? 0 : (row[2] ?? 0)
  })
  const xref = Buffer.concat([
    latin1(`${rows.length + 1} 0 obj\n`),
    stream(`/Type /XRef /Size ${rows.length + 2} /W [1 4 1] ${trailer}`, data),
    latin1('\nendobj\n'),
  ])
  parts.push(xref)
  parts.push(latin1(`startxref\n${length}\n%%EOF\n`))
  return new Uint8Array(Buffer.concat(parts))
}

/** A cross-reference stream of a few hundred bytes declaring `size` entries of widths `widths`, with `/Index`. */
export function xrefStreamBomb(options: {
  widths: number[]
  size: number
  index?: number[]
  chained?: number
}): Uint8Array {
  const parts: Buffer[] = [latin1('%PDF-1.7\n')]
  let length = parts[0]!.length
  let previous: number | undefined
  for (let i = 0; i < (options.chained ?? 1); i++) {
    const index = options.index ? ` /Index [${options.index.join(' ')}]` : ''
    const prev = previous === undefined ? '' : ` /Prev ${previous}`
    const object = Buffer.concat([
      latin1(`${i + 1} 0 obj\n`),
      stream(
        `/Type /XRef /Size ${options.size} /W [${options.widths.join(' ')}]${index}${prev} /Root 1 0 R`,
        Buffer.alloc(0),
      ),
      latin1('\nendobj\n'),
    ])
    previous = length
    parts.push(object)
    length += object.length
  }
  parts.push(latin1(`startxref\n${previous}\n%%EOF\n`))
  return new Uint8Array(Buffer.concat(parts))
}

/** A metadata stream whose /Length is an indirect reference to itself. */
export function selfLength(): Uint8Array {
  return withTable(
    [
      latin1('<< /Type /Catalog /Pages 2 0 R /AnchorMetadata 3 0 R >>'),
      ...PAGES,
      latin1('<< /Type /AnchorMetadata /Length 3 0 R >>\nstream\n{}\nendstream'),
    ],
    '/Root 1 0 R',
  )
}

/** A catalog holding arrays nested `depth` deep. */
export function deepNesting(depth: number): Uint8Array {
  return withTable(
    [latin1(`<< /Type /Catalog /Pages 2 0 R /Deep ${'['.repeat(depth)}${']'.repeat(depth)} >>`), ...PAGES],
    '/Root 1 0 R',
  )
}

/** Each hostile file, named as the tests say it. */
export const HOSTILE_FILES: [string, () => Uint8Array][] = [
  ['a metadata stream of 256 MiB of zeros, deflated', () => flateBomb(256, 1)],
  ['the same, deflated twice (a few KB)', () => flateBomb(256, 2)],
  ['a catalog in an object stream of 256 MiB', () => objectStreamBomb(256)],
  ['a cross-reference stream /W [0 0 0] /Size 8388607', () => xrefStreamBomb({ widths: [0, 0, 0], size: 8_388_607 })],
  ['a cross-reference stream /W [0 1 0] /Size 8388607', () => xrefStreamBomb({ widths: [0, 1, 0], size: 8_388_607 })],
  [
    'a cross-reference stream with 200 /Index pairs',
    () =>
      xrefStreamBomb({
        widths: [1, 2, 1],
        size: 8_388_607,
        index: Array.from({ length: 200 }, (_, i) => [i * 41_000, 41_000]).flat(),
      }),
  ],
  ['20 such sections chained by /Prev', () => xrefStreamBomb({ widths: [0, 1, 0], size: 8_388_607, chained: 20 })],
  ['a /Length that refers to itself', selfLength],
  ['arrays nested 100,000 deep', () => deepNesting(100_000)],
]
