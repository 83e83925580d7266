// Every hostile file ends within a few seconds, in bounded memory, as a damaged PDF: read, checked or about to be
// signed. The files are made here (hostile-files.ts), never committed.
import { describe, expect, it } from 'vitest'
import { prepareSignatureRevision } from '../../src/pdf/append-signature-revision.ts'
import { PdfError } from '../../src/pdf/pdf-errors.ts'
import { readSignedPdf } from '../../src/pdf/read-signed-pdf.ts'
import { HOSTILE_FILES } from './hostile-files.ts'

describe('hostile PDFs', () => {
  for (const [name, make] of HOSTILE_FILES) {
    it(`refuses ${name} within seconds, as damaged`, async () => {
      const bytes = make()
      expect(bytes.length).toBeLessThan(1024 * 1024)
      for (const attempt of [() => readSignedPdf(bytes), () => prepareSignatureRevision(bytes)]) {
        const started = performance.now()
        const error = await attempt().catch((e: unknown) => e)
        expect(performance.now() - started).toBeLessThan(5_000)
        expect(error, String(error)).toBeInstanceOf(PdfError)
        expect((error as PdfError).code).toBe('ERR_PDF_DAMAGED')
        expect((error as PdfError).message).not.toMatch(/\/work\/|node_modules|at .*\.ts/)
      }
    })
  }
})
