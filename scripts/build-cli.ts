// `npm run build:cli`, also run by `npm install` (the `prepare` script): bundles the `anchor` command into dist/cli/
// so that bin/anchor.js runs plain JavaScript instead of loading tsx and transpiling on every run. Each command is its
// own chunk (the dynamic imports of src/cli/anchor-command.ts), so `--help` loads none of them. npm packages stay
// external and load from node_modules as they are; our own sources, @docanchor/client's included, are bundled, and
// dist/cli/inputs.json records each one's size and mtime: bin/anchor.js uses the build only while all still match.
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build } from 'esbuild'
import { type BuildInput, CLI_BUILD_DIR, CLI_BUILD_MANIFEST } from '../bin/precompiled-cli.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const OUT_DIR = join(ROOT, CLI_BUILD_DIR)

const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}
const external = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })
  .filter((name) => name !== '@docanchor/client')
  .flatMap((name) => [name, `${name}/*`])

await rm(OUT_DIR, { recursive: true, force: true })
const result = await build({
  absWorkingDir: ROOT,
  entryPoints: { anchor: 'src/cli/anchor.ts' },
  outdir: OUT_DIR,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  conditions: ['@docanchor/source'],
  external,
  metafile: true,
  logLevel: 'warning',
})
const inputs: BuildInput[] = await Promise.all(
  Object.keys(result.metafile.inputs).map(async (path) => {
    const file = await stat(resolve(ROOT, path))
    return { path, size: file.size, mtimeMs: file.mtimeMs }
  }),
)
await writeFile(join(ROOT, CLI_BUILD_MANIFEST), `${JSON.stringify(inputs)}\n`)
