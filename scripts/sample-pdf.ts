// `npm run sample-pdf [-- <file>]`: writes a one-page A4 contract (default ./contract.pdf) for the README's
// walk-through, so that it needs no PDF from elsewhere. The lower right is left blank: `anchor sign` puts the QR code
// there by default.
import { writeFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { PDFDocument, StandardFonts } from 'pdf-lib'

// npm runs a script in the package's directory; INIT_CWD is where it was typed, which is where the file belongs.
const file = resolve(process.env.INIT_CWD ?? '.', process.argv[2] ?? 'contract.pdf')
const LINES = [
  'This agreement is made between Ada Lovelace and the Analytical Engine Company.',
  'The engine shall compute the numbers of Bernoulli as set out in Note G.',
  'Payment is due on delivery of the first table of results.',
  '',
  'A sample document of the document-anchoring service: sign it with `anchor sign`.',
]

const doc = await PDFDocument.create()
const [regular, bold] = await Promise.all([
  doc.embedFont(StandardFonts.Helvetica),
  doc.embedFont(StandardFonts.HelveticaBold),
])
const page = doc.addPage([595, 842])
page.drawText('Sample contract', { x: 56, y: 770, font: bold, size: 22 })
LINES.forEach((line, i) => {
  page.drawText(line, { x: 56, y: 720 - i * 18, font: regular, size: 11 })
})
doc.setTitle('Sample contract')
doc.setProducer('document-anchoring-service scripts/sample-pdf.ts')
await writeFile(file, await doc.save())
console.log(`wrote ${file}`)
