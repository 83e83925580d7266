// Bundles the verification page with Vite: content-hashed file names, minified. Vite (Rolldown) rather than esbuild
// because it tree-shakes Zod's `z` namespace, which @docanchor/client's formats use: esbuild keeps all of Zod, locales included
// (406 KB against 113 KB). Runs in a child process (bundle-page-process.ts), never in the server: Rolldown hooks
// the process's signals, and a SIGTERM that arrived during a build would kill the server instead of stopping it.
import { existsSync } from 'node:fs'
import { isAbsolute } from 'node:path'
import { fileURLToPath } from 'node:url'
import { build, defaultClientConditions, type Plugin, type Rollup } from 'vite'

export interface BundledFile {
  /** File name under `assets/`, e.g. `main-BpMNEaOG.js`. */
  name: string
  body: Uint8Array
  /** `script` and `style` are the entry files the HTML links; `chunk` files are loaded by the script. */
  role: 'script' | 'style' | 'chunk'
}

// Browsers from 2023 on: native ESM, AbortSignal.timeout and DecompressionStream.
const TARGETS = ['es2022', 'chrome111', 'firefox115', 'safari16.4']

export interface BundledPage {
  files: BundledFile[]
  /** Absolute paths of every source file the build read, tree-shaken ones included: a precompiled page is fresh
   * while all are unchanged (scripts/precompile.ts). */
  inputs: string[]
}

/** Collects the module graph's files (not Vite's virtual modules). */
function collectSourceFiles(inputs: Set<string>): Plugin {
  return {
    name: 'collect-source-files',
    buildEnd() {
      for (const id of this.getModuleIds()) {
        const path = id.split('?')[0]!
        if (isAbsolute(path) && existsSync(path)) inputs.add(path)
      }
    },
  }
}

export async function bundlePage(): Promise<BundledPage> {
  const root = fileURLToPath(new URL('./client/', import.meta.url))
  const inputs = new Set<string>()
  const output = await build({
    root,
    base: './',
    configFile: false,
    envFile: false,
    publicDir: false,
    logLevel: 'silent',
    // @docanchor/client's TypeScript sources, as everywhere in the repository (no build step on install).
    resolve: { conditions: ['@docanchor/source', ...defaultClientConditions] },
    plugins: [collectSourceFiles(inputs)],
    // The PDF reader's worker (pdf-check.ts), as a module like the page's own scripts.
    worker: { format: 'es', plugins: () => [collectSourceFiles(inputs)] },
    build: {
      write: false,
      target: TARGETS,
      minify: true,
      assetsDir: '',
      assetsInlineLimit: 0,
      modulePreload: false,
      reportCompressedSize: false,
      copyPublicDir: false,
      rollupOptions: { input: { main: `${root}main.ts` } },
    },
  })
  const bundles = (Array.isArray(output) ? output : [output]) as Rollup.RollupOutput[]
  const files: BundledFile[] = []
  const styles = new Set<string>()
  for (const file of bundles.flatMap((bundle) => bundle.output)) {
    if (file.type === 'chunk') {
      files.push({
        name: file.fileName,
        body: new TextEncoder().encode(file.code),
        role: file.isEntry ? 'script' : 'chunk',
      })
      if (file.isEntry) for (const css of file.viteMetadata?.importedCss ?? []) styles.add(css)
    } else {
      const body = typeof file.source === 'string' ? new TextEncoder().encode(file.source) : file.source
      files.push({ name: file.fileName, body, role: 'chunk' })
    }
  }
  for (const file of files) if (styles.has(file.name)) file.role = 'style'
  return { files, inputs: [...inputs] }
}
