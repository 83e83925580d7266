// Decodes the streams the reader needs (cross-reference streams, object streams, the metadata stream): no filter or
// FlateDecode, with the PNG predictors that cross-reference streams use. DecompressionStream is a Web API. Every
// decoding stops at a limit: a few kilobytes of deflate (twice, even) can expand to gigabytes.

import { damaged, PdfError } from './pdf-errors.ts'
import { PdfDict, PdfName, type PdfStreamObject, type PdfValue } from './pdf-syntax.ts'
import { tooMuch } from './read-budget.ts'

const TOO_LARGE = Symbol('too large')

async function inflate(data: Uint8Array, limit: number): Promise<Uint8Array> {
  const reader = new Blob([data as Uint8Array<ArrayBuffer>])
    .stream()
    .pipeThrough(new DecompressionStream('deflate'))
    .getReader()
  const chunks: Uint8Array[] = []
  let size = 0
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) break
      size += value.length
      if (size > limit) throw TOO_LARGE
      chunks.push(value)
    }
  } catch (error) {
    await reader.cancel().catch(() => {})
    if (error === TOO_LARGE) throw tooMuch(`a compressed stream expands beyond ${limit} bytes`)
    throw damaged('a FlateDecode stream cannot be decompressed')
  }
  const out = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c
  const pa = Math.abs(p - a)
  const pb = Math.abs(p - b)
  const pc = Math.abs(p - c)
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c
}

/** Undoes PNG prediction (predictors 10-15): every row starts with its own filter type byte. */
function unpredictPng(data: Uint8Array, params: PdfDict): Uint8Array {
  const num = (key: string, fallback: number) => {
    const value = params.get(key)
    return typeof value === 'number' ? value : fallback
  }
  const colors = num('Colors', 1)
  const bits = num('BitsPerComponent', 8)
  const bytesPerPixel = Math.max(1, Math.ceil((colors * bits) / 8))
  const rowLength = Math.ceil((colors * bits * num('Columns', 1)) / 8)
  const rows = Math.floor(data.length / (rowLength + 1))
  const out = new Uint8Array(rows * rowLength)
  for (let row = 0; row < rows; row++) {
    const type = data[row * (rowLength + 1)]
    const src = data.subarray(row * (rowLength + 1) + 1, (row + 1) * (rowLength + 1))
    const at = row * rowLength
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bytesPerPixel ? out[at + i - bytesPerPixel]! : 0
      const up = row > 0 ? out[at + i - rowLength]! : 0
      const upLeft = row > 0 && i >= bytesPerPixel ? out[at + i - rowLength - bytesPerPixel]! : 0
      const x = src[i]!
      let value: number
      if (type === 0) value = x
      else if (type === 1) value = x + left
      else if (type === 2) value = x + up
      else if (type === 3) value = x + ((left + up) >> 1)
      else if (type === 4) value = x + paeth(left, up, upLeft)
      else throw damaged(`unknown PNG predictor row type ${type}`)
      out[at + i] = value & 0xff
    }
  }
  return out
}

const asList = (value: PdfValue | undefined): PdfValue[] =>
  value === undefined || value === null ? [] : Array.isArray(value) ? value : [value]

/** More filters than this on one stream is a bomb, not compression. */
const MAX_FILTERS = 4

/** The decoded data of a stream whose filters are none or FlateDecode; at most `limit` bytes at every stage. */
export async function decodeStream(stream: PdfStreamObject, limit: number): Promise<Uint8Array> {
  const filters = asList(stream.dict.get('Filter'))
  const params = asList(stream.dict.get('DecodeParms'))
  if (filters.length > MAX_FILTERS) throw tooMuch(`a stream is encoded ${filters.length} times over`)
  let data = stream.data
  if (data.length > limit) throw tooMuch(`a stream is larger than ${limit} bytes`)
  for (const [index, filter] of filters.entries()) {
    const name = filter instanceof PdfName ? filter.name : undefined
    if (name !== 'FlateDecode' && name !== 'Fl') {
      throw new PdfError('ERR_PDF_UNSUPPORTED', `stream filter ${name ?? '?'} is not supported by this reader`)
    }
    data = await inflate(data, limit)
    const param = params[index]
    const predictor = param instanceof PdfDict ? param.get('Predictor') : undefined
    if (typeof predictor === 'number' && predictor >= 10 && param instanceof PdfDict) data = unpredictPng(data, param)
    else if (typeof predictor === 'number' && predictor > 1) {
      throw new PdfError('ERR_PDF_UNSUPPORTED', `stream predictor ${predictor} is not supported by this reader`)
    }
  }
  return data
}
