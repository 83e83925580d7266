// The verification page's files, pre-compressed: those `npm install` built (scripts/precompile.ts) while they match
// their sources, else (outside production, where Vite and tsx are installed) built now in a child process (see
// bundle-page.ts for why). No build output is committed, and a stale one is never served; static-build.ts writes the
// same files to disk.
import { spawn } from 'node:child_process'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import { PRECOMPILED_PAGE, precompiledIsFresh } from '../precompiled-builds.js'
import type { BundledFile } from './bundle-page.ts'
import { assetContentType, readWebBuild, type WebAsset, type WebBuild } from './web-build-files.ts'

const ROOT = fileURLToPath(new URL('../../', import.meta.url))

/** Most a build may take before it is abandoned; a loaded two-core machine needs a few seconds. */
const BUILD_TIMEOUT_MS = 120_000

function asset(name: string, body: Uint8Array): WebAsset {
  return {
    name,
    contentType: assetContentType(name),
    body,
    gzip: gzipSync(body, { level: 9 }),
    brotli: brotliCompressSync(body, {
      params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
    }),
  }
}

/** Runs bundle-page-process.ts under tsx in a child Node process; `signal` stops it. */
function runBundler(signal?: AbortSignal): Promise<BundledFile[]> {
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href
  const entry = fileURLToPath(new URL('./bundle-page-process.ts', import.meta.url))
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', tsx, entry], {
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: BUILD_TIMEOUT_MS,
      // The bundler traps SIGTERM and would finish its build first, holding up the server's shutdown; the child
      // keeps no state, so it is killed outright.
      killSignal: 'SIGKILL',
      ...(signal ? { signal } : {}),
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    child.on('error', reject)
    child.on('close', (code) => {
      if (code !== 0) {
        const detail = Buffer.concat(stderr).toString().trim().split('\n').slice(-5).join('\n')
        reject(new Error(`the verification page build failed (exit ${code}): ${detail}`))
        return
      }
      try {
        const files = JSON.parse(Buffer.concat(stdout).toString()) as (Omit<BundledFile, 'body'> & { body: string })[]
        resolve(files.map((file) => ({ ...file, body: new Uint8Array(Buffer.from(file.body, 'base64')) })))
      } catch (error) {
        reject(error)
      }
    })
  })
}

/** Compresses a fresh bundle's files and finds its entries. */
export function toWebBuild(files: BundledFile[]): WebBuild {
  const assets = new Map(files.map((file) => [file.name, asset(file.name, file.body)]))
  const script = files.find((file) => file.role === 'script')?.name
  const style = files.find((file) => file.role === 'style')?.name
  if (!script || !style) throw new Error('the verification page build produced no script or stylesheet')
  return { assets, script, style }
}

export interface WebAssetsOptions {
  /** Stops a build under way. */
  signal?: AbortSignal
  /** Production, which holds no build tool: the precompiled page or an error. */
  prebuiltOnly?: boolean
}

/** The page's files: read from the precompiled build while it is fresh, else bundled now, or refused. */
export async function buildWebAssets(options: WebAssetsOptions = {}): Promise<WebBuild> {
  if (precompiledIsFresh(ROOT, PRECOMPILED_PAGE)) return readWebBuild(join(ROOT, PRECOMPILED_PAGE.dir))
  if (options.prebuiltOnly) {
    throw new Error(
      `the verification page in ${PRECOMPILED_PAGE.dir}/ is missing or no longer matches its sources, and production ` +
        'serves only a built page: run `npm run build` (with the development dependencies) before starting',
    )
  }
  return toWebBuild(await runBundler(options.signal))
}
