// The chicken and egg of a PDF signature: it lives inside the file whose bytes it signs. The revision is written with
// placeholders of the final width, then /ByteRange is filled in (everything but /Contents' hex string), those bytes
// hashed, and the CMS written into /Contents. The placeholders are names: @libpdf/core writes a name as it is, never
// encrypting it (only strings and streams are) and never compressing it, so each reserves exactly its bytes.
import { PdfName } from '@libpdf/core'
import { toHex } from '../formats/hex.ts'
import { PdfError } from './pdf-errors.ts'

/** Room for the CMS: the signer's certificate chain, the signature and a timestamp token with the TSA's chain. */
export const MAX_SIGNATURE_BYTES = 16 * 1024
/** `[0 a b c]` with each number in 10 places: 36 bytes, written over a name of the same width. */
const BYTE_RANGE_WIDTH = 36
const BYTE_RANGE_NAME = 'AnchorByteRange'.padEnd(BYTE_RANGE_WIDTH - 1, '_')
/** `<` + the CMS in hex, zero-padded + `>`. */
const CONTENTS_WIDTH = 2 * MAX_SIGNATURE_BYTES + 2
const CONTENTS_NAME = 'AnchorContents'.padEnd(CONTENTS_WIDTH - 1, '_')

export const byteRangePlaceholder = () => PdfName.of(BYTE_RANGE_NAME)
export const contentsPlaceholder = () => PdfName.of(CONTENTS_NAME)

export interface PlacedSignature {
  /** The file with /ByteRange filled in and /Contents still to write. */
  bytes: Uint8Array
  /** The bytes /ByteRange covers, concatenated: what the CMS signs. */
  signedBytes: Uint8Array
  /** Writes the CMS (DER) into /Contents; the file is then complete. */
  embed(cms: Uint8Array): Uint8Array
}

/** Fills in /ByteRange of the signature written after `from` (the revision's first byte) in `bytes`. */
export function placeSignature(bytes: Uint8Array, from: number): PlacedSignature {
  const byteRangeAt = find(bytes, `/${BYTE_RANGE_NAME}`, from)
  const contentsAt = find(bytes, `/${CONTENTS_NAME}`, from)
  const gapStart = contentsAt
  const gapEnd = contentsAt + CONTENTS_WIDTH
  const lengths = [gapStart, gapEnd, bytes.length - gapEnd].map((n) => String(n).padEnd(10, ' '))
  const filled = bytes.slice()
  filled.set(ascii(`[0 ${lengths.join(' ')}]`), byteRangeAt)
  filled.set(ascii(`<${'0'.repeat(CONTENTS_WIDTH - 2)}>`), contentsAt)
  const signedBytes = new Uint8Array(gapStart + (bytes.length - gapEnd))
  signedBytes.set(filled.subarray(0, gapStart))
  signedBytes.set(filled.subarray(gapEnd), gapStart)
  return {
    bytes: filled,
    signedBytes,
    embed(cms) {
      if (cms.length > MAX_SIGNATURE_BYTES) {
        throw new PdfError(
          'ERR_PDF_UNSUPPORTED',
          `the signature is ${cms.length} bytes, more than the ${MAX_SIGNATURE_BYTES} reserved`,
        )
      }
      const complete = filled.slice()
      complete.set(ascii(toHex(cms)), contentsAt + 1)
      return complete
    },
  }
}

function find(bytes: Uint8Array, text: string, from: number): number {
  const needle = ascii(text)
  outer: for (let i = bytes.length - needle.length; i >= from; i--) {
    for (let j = 0; j < needle.length; j++) if (bytes[i + j] !== needle[j]) continue outer
    return i
  }
  throw new PdfError('ERR_PDF_UNSUPPORTED', 'the PDF library did not write the signature’s placeholders')
}

const ascii = (text: string) => new TextEncoder().encode(text)
