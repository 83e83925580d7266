// Test PDFs made by real producers (pdf-lib, qpdf), the system tools that judge the results (qpdf, poppler, zbar),
// and an in-memory anchor store that plays the chain for tests of the PDF layer alone.

import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { toHex } from '../../src/formats/hex.ts'
import type { AnchorRecord } from '../../src/pdf/check-signed-pdf.ts'
import type { AnchorRequest } from '../../src/pdf/sign-pdf.ts'

const run = promisify(execFile)

export interface PdfLibOptions {
  pages?: number
  /** pdf-lib's default: objects in object streams and a cross-reference stream. */
  objectStreams?: boolean
  title?: string
}

export async function pdfLibDocument(options: PdfLibOptions = {}): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let i = 0; i < (options.pages ?? 1); i++) {
    const page = doc.addPage([595, 842])
    page.drawText(`${options.title ?? 'Contract'}, page ${i + 1}`, { x: 50, y: 760, font, size: 20 })
  }
  doc.setProducer('pdf-lib test fixture')
  return doc.save({ useObjectStreams: options.objectStreams ?? false })
}

export async function withTempDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'anchor-pdf-'))
  try {
    return await fn(dir)
  } finally {
    await rm(dir, { recursive: true, force: true })
  }
}

/** Runs qpdf on `input` with `args` and returns the output file. */
export function qpdfTransform(input: Uint8Array, args: string[]): Promise<Uint8Array> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'in.pdf'), input)
    await run('qpdf', [...args, join(dir, 'in.pdf'), join(dir, 'out.pdf')])
    return new Uint8Array(await readFile(join(dir, 'out.pdf')))
  })
}

/** `qpdf --check`: resolves with its output when the file passes, throws with it when not. */
export function qpdfCheck(pdf: Uint8Array): Promise<string> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const { stdout, stderr } = await run('qpdf', ['--check', join(dir, 'f.pdf')])
    return stdout + stderr
  })
}

/** Renders one page with pdftoppm and decodes every QR code on it with zbarimg. */
export function scanQrCodes(pdf: Uint8Array, page = 1): Promise<string[]> {
  return withTempDir(async (dir) => {
    await writeFile(join(dir, 'f.pdf'), pdf)
    const p = String(page)
    await run('pdftoppm', [
      '-r',
      '150',
      '-gray',
      '-png',
      '-f',
      p,
      '-l',
      p,
      '-singlefile',
      join(dir, 'f.pdf'),
      join(dir, 'page'),
    ])
    try {
      const { stdout } = await run('zbarimg', [
        '--quiet',
        '--raw',
        '-Sdisable',
        '-Sqrcode.enable',
        join(dir, 'page.png'),
      ])
      return stdout.split('\n').filter((line) => line !== '')
    } catch (error) {
      // zbarimg exits 4 when it finds no code.
      if ((error as { code?: number }).code === 4) return []
      throw error
    }
  })
}

/** Plays the relay and the verify endpoint for PDF-layer tests: anchors live in memory. */
export class MemoryAnchors {
  readonly records = new Map<string, AnchorRecord>()

  anchor = async (request: AnchorRequest): Promise<{ txHash: string }> => {
    const txHash = `0x${toHex(crypto.getRandomValues(new Uint8Array(32)))}`
    this.records.set(txHash, {
      txHash,
      compositeHash: request.compositeHash,
      previousTxHash: request.previousTxHash,
      timestamp: Math.floor(Date.now() / 1000),
      signer: '0x0000000000000000000000000000000000000001',
      encryptedPayload: request.encryptedPayload,
    })
    return { txHash }
  }

  verify = async (txHash: string): Promise<AnchorRecord | null> => this.records.get(txHash.toLowerCase()) ?? null
}
