// `npm run build`, also run by `npm install` (the `prepare` script): bundles each entry point of bin/precompiled.js
// (the `anchor` command, the service) into its directory under dist/, so that bin/anchor.js and bin/server.js run
// plain JavaScript instead of loading tsx and transpiling on every run. Code split at dynamic imports: each `anchor`
// command is its own chunk, so `--help` loads none of them. npm packages stay external and load from node_modules as
// they are; our own sources, @docanchor/client's included, are bundled, and <dir>/inputs.json records each one's size
// and mtime: the bin scripts use a build only while all still match.
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'
import { type BuildInput, buildManifest, PRECOMPILED_TARGETS, type PrecompiledTarget } from '../bin/precompiled.js'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>
  devDependencies: Record<string, string>
}
const external = Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })
  .filter((name) => name !== '@docanchor/client')
  .flatMap((name) => [name, `${name}/*`])

/**
 * Gives every bundled module its own source file's `import.meta.url` (written relative to the chunk, so a moved
 * checkout still works), instead of the chunk's: paths found through it (the migrations folder, package.json, the
 * page's sources, child process entries, packages resolved with createRequire) then resolve from dist/ exactly as
 * they do from the sources.
 */
function sourceImportMetaUrl(outDir: string): Plugin {
  return {
    name: 'source-import-meta-url',
    setup(build) {
      build.onLoad({ filter: /\.ts$/ }, async ({ path }) => {
        const contents = await readFile(path, 'utf8')
        if (!contents.includes('import.meta.url')) return undefined
        const fromChunk = relative(outDir, path).split('\\').join('/')
        return {
          contents: contents.replaceAll(
            'import.meta.url',
            `new URL(${JSON.stringify(fromChunk)}, import.meta.url).href`,
          ),
          loader: 'ts',
        }
      })
    },
  }
}

async function precompile(target: PrecompiledTarget): Promise<void> {
  const outDir = join(ROOT, target.dir)
  await rm(outDir, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { [target.entry]: target.source },
    outdir: outDir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    conditions: ['@docanchor/source'],
    external,
    plugins: [sourceImportMetaUrl(outDir)],
    metafile: true,
    logLevel: 'warning',
  })
  const inputs: BuildInput[] = await Promise.all(
    Object.keys(result.metafile.inputs).map(async (path) => {
      const file = await stat(resolve(ROOT, path))
      return { path, size: file.size, mtimeMs: file.mtimeMs }
    }),
  )
  await writeFile(join(ROOT, buildManifest(target)), `${JSON.stringify(inputs)}\n`)
}

// `tsx scripts/precompile.ts server` builds only the targets named; without names, all of them.
const names = process.argv.slice(2)
const unknown = names.filter((name) => !Object.hasOwn(PRECOMPILED_TARGETS, name))
if (unknown.length > 0) throw new Error(`no precompiled target named ${unknown.join(', ')}`)
const targets = Object.entries(PRECOMPILED_TARGETS).filter(([name]) => names.length === 0 || names.includes(name))
await Promise.all(targets.map(([, target]) => precompile(target)))
