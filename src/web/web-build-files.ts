// The verification page's built files on disk: assets/<name> with its pre-compressed .gz and .br beside it (the
// layout static hosts serve such copies from), and, for the build the service reads back instead of bundling at start
// (src/precompiled-builds.js), page.json naming the entry files the HTML links.
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises'
import { join } from 'node:path'

export interface WebAsset {
  /** File name under `assets/`, with its content hash. */
  name: string
  contentType: string
  body: Uint8Array
  gzip: Uint8Array
  brotli: Uint8Array
}

export interface WebBuild {
  assets: Map<string, WebAsset>
  /** Names of the entry files the HTML links. */
  script: string
  style: string
}

const CONTENT_TYPES: Record<string, string> = {
  js: 'text/javascript; charset=utf-8',
  css: 'text/css; charset=utf-8',
}

/** What the page's build is made of: only scripts and stylesheets. */
export function assetContentType(name: string): string {
  const contentType = CONTENT_TYPES[name.slice(name.lastIndexOf('.') + 1)]
  if (!contentType) throw new Error(`unexpected file in the verification page build: ${name}`)
  return contentType
}

const ENCODED_COPIES = [
  ['', 'body'],
  ['.gz', 'gzip'],
  ['.br', 'brotli'],
] as const

/** Replaces `outDir`/assets with `assets`; returns the files written, relative to `outDir`. */
export async function writeAssets(outDir: string, assets: Iterable<WebAsset>): Promise<string[]> {
  await rm(join(outDir, 'assets'), { recursive: true, force: true })
  await mkdir(join(outDir, 'assets'), { recursive: true })
  const written: string[] = []
  for (const file of assets) {
    for (const [suffix, encoding] of ENCODED_COPIES) {
      await writeFile(join(outDir, 'assets', `${file.name}${suffix}`), file[encoding])
      written.push(`assets/${file.name}${suffix}`)
    }
  }
  return written
}

interface PageManifest {
  script: string
  style: string
  files: string[]
}

export async function writeWebBuild(outDir: string, { assets, script, style }: WebBuild): Promise<void> {
  await writeAssets(outDir, assets.values())
  const manifest: PageManifest = { script, style, files: [...assets.keys()] }
  await writeFile(join(outDir, 'page.json'), `${JSON.stringify(manifest)}\n`)
}

export async function readWebBuild(outDir: string): Promise<WebBuild> {
  const { script, style, files } = JSON.parse(await readFile(join(outDir, 'page.json'), 'utf8')) as PageManifest
  const read = (path: string) => readFile(join(outDir, 'assets', path)).then((body) => new Uint8Array(body))
  const assets = await Promise.all(
    files.map(async (name): Promise<WebAsset> => {
      const [body, gzip, brotli] = await Promise.all(ENCODED_COPIES.map(([suffix]) => read(`${name}${suffix}`)))
      return { name, contentType: assetContentType(name), body: body!, gzip: gzip!, brotli: brotli! }
    }),
  )
  return { assets: new Map(assets.map((asset) => [asset.name, asset])), script, style }
}
