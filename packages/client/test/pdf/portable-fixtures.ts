// Test PDFs made by pdf-lib and an in-memory anchor store that plays the chain (and the service's PDF signer) for
// tests of the PDF layer alone:
// Web APIs only, so the same fixtures serve the Node and the Chromium runs.

import { PDFDocument, StandardFonts } from 'pdf-lib'
import { toHex } from '../../src/formats/hex.ts'
import type { AnchorRecord } from '../../src/pdf/check-signed-pdf.ts'
import type { AnchorRequest, PdfSignatureRequest } from '../../src/pdf/sign-pdf.ts'
import { testPdfSignature } from './test-pdf-signer.ts'

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

  /** The service's PDF signature for one of these anchors. */
  pdfSignature = async (request: PdfSignatureRequest): Promise<Uint8Array> => {
    if (!this.records.has(request.txHash)) throw new Error(`no anchor ${request.txHash}`)
    return testPdfSignature(request)
  }
}
