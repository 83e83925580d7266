// `npm run build`, also run by `npm install` (the `prepare` script): makes each build of src/precompiled-builds.js under
// dist/. Each entry point (the `anchor` command, the service) is bundled into its directory (entry-bundle.ts), so
// that packages/cli/bin/anchor.js and bin/server.js run plain JavaScript instead of loading tsx and transpiling on
// every run. npm packages but viem stay external and load from node_modules as they are; our own sources,
// @docanchor/client's included, are bundled. The verification page is bundled by Vite and pre-compressed, so that the
// service does not spend a core on it for seconds after every start. <dir>/inputs.json records the size and mtime of
// every source a build read, written last: a build is used only while all still match.
import { readFile, rm, stat, writeFile } from 'node:fs/promises'
import { createRequire } from 'node:module'
import { join, relative, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, type Plugin } from 'esbuild'
import {
  type BuildInput,
  buildManifest,
  PRECOMPILED_BUILDS,
  PRECOMPILED_PAGE,
  type PrecompiledBuild,
  type PrecompiledTarget,
} from '../src/precompiled-builds.js'
import { toWebBuild } from '../src/web/build-assets.ts'
import { bundlePage } from '../src/web/bundle-page.ts'
import { writeWebBuild } from '../src/web/web-build-files.ts'
import { ENTRY_BUNDLE_OPTIONS } from './entry-bundle.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))

interface Manifest {
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
}
/** The service's and the `anchor` command's: the checkout's builds bundle both. */
const manifests = await Promise.all(
  ['package.json', 'packages/cli/package.json'].map(
    async (path) => JSON.parse(await readFile(join(ROOT, path), 'utf8')) as Manifest,
  ),
)
/**
 * Packages bundled rather than loaded from node_modules: our own client package, and viem and drizzle-orm, which are
 * plain ESM marked free of side effects, so that the bundle keeps only the part we use (viem: ~35 ms to load, against
 * ~180 ms for its whole index on the 2-core machine; drizzle-orm: ~60 ms less of a warm start than its files loaded
 * one by one). Packages that other packages also import (zod, Fastify's plugins) stay external, so that there is one
 * copy of each and their classes and registries stay shared; only drizzle-kit, a development tool, imports
 * drizzle-orm.
 */
const BUNDLED_PACKAGES = new Set(['@docanchor/client', 'viem', 'drizzle-orm'])
/** viem's WebSocket transport (which we never use) loads isows, which loads ws: CommonJS, whose `require` calls an
 * ESM bundle cannot serve, so these two load from node_modules if ever. */
const EXTERNAL_DEPENDENCIES_OF_BUNDLED = ['isows', 'ws']
const external = [
  ...manifests
    .flatMap((manifest) => Object.keys({ ...manifest.dependencies, ...manifest.devDependencies }))
    .filter((name) => !BUNDLED_PACKAGES.has(name)),
  ...EXTERNAL_DEPENDENCIES_OF_BUNDLED,
].flatMap((name) => [name, `${name}/*`])

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

/** A bundled package's files are recorded by its package.json, which an install or upgrade rewrites: one stat for
 * the package rather than one per file (viem alone is several hundred). */
function recordedPath(input: string): string {
  const pkg = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input)
  return pkg ? `${pkg[1]}/package.json` : input
}

/** Records the size and mtime of every source of a finished build (paths absolute or relative to the checkout). */
async function recordInputs(target: PrecompiledBuild, paths: string[]): Promise<void> {
  const inputs: BuildInput[] = await Promise.all(
    [...new Set(paths.map((path) => recordedPath(relative(ROOT, resolve(ROOT, path)))))].map(async (path) => {
      const file = await stat(resolve(ROOT, path))
      return { path, size: file.size, mtimeMs: file.mtimeMs }
    }),
  )
  await writeFile(join(ROOT, buildManifest(target)), `${JSON.stringify(inputs)}\n`)
}

async function precompileEntry(target: PrecompiledTarget): Promise<void> {
  const outDir = join(ROOT, target.dir)
  await rm(outDir, { recursive: true, force: true })
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { [target.entry]: target.source, ...target.alsoEntries },
    outdir: outDir,
    ...ENTRY_BUNDLE_OPTIONS,
    conditions: ['@docanchor/source'],
    external,
    plugins: [sourceImportMetaUrl(outDir)],
    metafile: true,
  })
  await recordInputs(target, Object.keys(result.metafile.inputs))
}

/** Besides the page's module graph, its output depends on the Vite build's settings, the compression's, the files'
 * layout and Vite. */
const PAGE_BUILD_INPUTS = [
  'src/web/bundle-page.ts',
  'src/web/build-assets.ts',
  'src/web/web-build-files.ts',
  createRequire(import.meta.url).resolve('vite'),
]

async function precompilePage(): Promise<void> {
  const outDir = join(ROOT, PRECOMPILED_PAGE.dir)
  await rm(outDir, { recursive: true, force: true })
  const { files, inputs } = await bundlePage()
  await writeWebBuild(outDir, toWebBuild(files))
  await recordInputs(PRECOMPILED_PAGE, [...inputs, ...PAGE_BUILD_INPUTS])
}

const BUILDERS: Record<keyof typeof PRECOMPILED_BUILDS, () => Promise<void>> = {
  cli: () => precompileEntry(PRECOMPILED_BUILDS.cli),
  server: () => precompileEntry(PRECOMPILED_BUILDS.server),
  admin: () => precompileEntry(PRECOMPILED_BUILDS.admin),
  deploy: () => precompileEntry(PRECOMPILED_BUILDS.deploy),
  page: precompilePage,
}

// `tsx scripts/precompile.ts server page` makes only the builds named; without names, all of them.
const names = process.argv.slice(2)
const unknown = names.filter((name) => !Object.hasOwn(BUILDERS, name))
if (unknown.length > 0) throw new Error(`no precompiled build named ${unknown.join(', ')}`)
const builds = Object.entries(BUILDERS).filter(([name]) => names.length === 0 || names.includes(name))
await Promise.all(builds.map(([, precompile]) => precompile()))
