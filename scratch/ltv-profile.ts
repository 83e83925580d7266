import { openWithLibrary } from '../packages/client/src/pdf/encrypted-pdf.ts'
import { addLongTermValidation } from '../packages/client/src/pdf/long-term-validation.ts'
import { readSignedPdf, readSignedPdfForUpdate } from '../packages/client/src/pdf/read-signed-pdf.ts'
import { signPdf } from '../packages/client/src/pdf/sign-pdf.ts'
import { MemoryAnchors, pdfLibDocument } from '../packages/client/test/pdf/portable-fixtures.ts'
import { testService } from '../packages/client/test/pdf/test-pdf-signer.ts'

const service = await testService()
const signer = await service.signer()
const anchors = new MemoryAnchors()
const input = await pdfLibDocument()
const opts = {
  signer: { type: 'individual', name: 'A', email: 'signer@example.com' } as const,
  verifyBaseUrl: 'https://v.example',
  anchor: anchors.anchor,
  pdfSignature: service.pdfSignature(signer),
  chainId: 31337,
  contractAddress: `0x${'00'.repeat(20)}`,
}
for (let round = 0; round < 3; round++) {
  let t = performance.now()
  const bt = await signPdf(input, opts)
  const tBt = performance.now() - t
  t = performance.now()
  await readSignedPdfForUpdate(bt.bytes)
  const tRead = performance.now() - t
  t = performance.now()
  const { document } = await openWithLibrary(bt.bytes, undefined)
  const tOpen = performance.now() - t
  t = performance.now()
  const lt = service.longTermValidation()
  const v = await document.addValidationData({ revocationProvider: lt.revocation })
  const tVal = performance.now() - t
  t = performance.now()
  const ts = await document.addTimestamp({
    timestampAuthority: { timestamp: (d) => lt.documentTimestamp(d) },
    estimatedSize: 12288,
  })
  const tTs = performance.now() - t
  t = performance.now()
  await readSignedPdf(ts.bytes)
  const tCheck = performance.now() - t
  t = performance.now()
  await addLongTermValidation(bt.bytes, lt)
  const tAll = performance.now() - t
  console.log({ tBt, tRead, tOpen, tVal, tTs, tCheck, tAll })
}
