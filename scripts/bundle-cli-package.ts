// `npm pack -w @docanchor/cli` (its prepack script): bundles the command's own sources into packages/cli/dist/, which
// its bin/anchor.js runs once installed. Every npm package stays external, @docanchor/client included: the package
// depends on them by name, and npm installs them beside it. postpack removes dist/ again, so that in the repository
// the package is its sources alone (bin/anchor.js tells the two apart by them).
import { rm } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { ENTRY_BUNDLE_OPTIONS } from './entry-bundle.ts'

const PACKAGE = fileURLToPath(new URL('../packages/cli/', import.meta.url))
const outdir = `${PACKAGE}dist`

await rm(outdir, { recursive: true, force: true })
await build({
  ...ENTRY_BUNDLE_OPTIONS,
  absWorkingDir: PACKAGE,
  entryPoints: { anchor: 'src/anchor.ts' },
  outdir,
  packages: 'external',
})
