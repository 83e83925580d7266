// Measures @docanchor/client as an application bundles it for the browser (Vite/Rolldown, minified, tree-shaken
// from the package root), gzip level 9: the formats + API client alone, and with the PDF signer and checker.
// Figures go into packages/client/README.md. Run: npx tsx --conditions=@docanchor/source scripts/measure-client-size.ts
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { gzipSync } from 'node:zlib'
import { build, defaultClientConditions, type Rollup } from 'vite'

const FORMATS_AND_CLIENT = [
  'createAnchorClient',
  'buildAnchorPayload',
  'serializeAnchorPayload',
  'compositeHash',
  'generatePayloadKey',
  'encryptPayload',
  'decryptPayload',
  'buildQrUrl',
  'parseQrUrl',
  'readPdfMetadata',
  'writePdfMetadata',
]
const WITH_PDF = [...FORMATS_AND_CLIENT, 'signPdf', 'checkSignedPdf']

async function bundledSize(dir: string, names: string[]): Promise<{ minified: number; gzip: number }> {
  const entry = join(dir, `entry-${names.length}.js`)
  await writeFile(entry, `export { ${names.join(', ')} } from '@docanchor/client'\n`)
  const output = (await build({
    configFile: false,
    logLevel: 'silent',
    resolve: { conditions: ['@docanchor/source', ...defaultClientConditions] },
    build: {
      write: false,
      minify: true,
      target: 'es2022',
      rollupOptions: { input: entry, preserveEntrySignatures: 'exports-only' },
    },
  })) as Rollup.RollupOutput
  const code = output.output
    .filter((file): file is Rollup.OutputChunk => file.type === 'chunk')
    .map((chunk) => chunk.code)
    .join('')
  return { minified: Buffer.byteLength(code), gzip: gzipSync(code, { level: 9 }).length }
}

const dir = await mkdtemp(join(process.cwd(), '.measure-'))
try {
  for (const [label, names] of [
    ['formats + API client', FORMATS_AND_CLIENT],
    ['with the PDF signer and checker', WITH_PDF],
  ] as const) {
    const { minified, gzip } = await bundledSize(dir, names)
    console.log(`${label}: ${(minified / 1024).toFixed(1)} KiB minified, ${(gzip / 1024).toFixed(1)} KiB gzip`)
  }
} finally {
  await rm(dir, { recursive: true, force: true })
}
