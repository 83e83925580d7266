// Writes the verification page as static files to host anywhere (entry: build-static.ts). The host must answer
// every `/v/<id>` (under any path prefix) with index.html and serve assets/ with a long cache; the API must list the
// page's origin in CORS_ORIGINS.
import { writeFile } from 'node:fs/promises'
import { join, resolve } from 'node:path'
import { buildWebAssets } from './build-assets.ts'
import { contentSecurityPolicy, renderPageHtml } from './page-html.ts'
import { writeAssets } from './web-build-files.ts'

export interface StaticBuildOptions {
  outDir: string
  /** '' when the API is on the page's origin, else its absolute URL. */
  apiBase: string
}

/** Returns the files written, relative to `outDir`. */
export async function buildStaticPage(options: StaticBuildOptions): Promise<string[]> {
  const apiBase = options.apiBase.replace(/\/+$/, '')
  if (apiBase !== '' && !/^https?:\/\/[^\s?#]+$/i.test(apiBase)) {
    throw new Error('--api-base must be an absolute http(s) URL without query or fragment')
  }
  const { assets, script, style } = await buildWebAssets()
  const html = renderPageHtml({
    scriptHref: `../assets/${script}`,
    styleHref: `../assets/${style}`,
    apiBase,
    metaContentSecurityPolicy: contentSecurityPolicy(apiBase, { forMeta: true }),
  })
  const outDir = resolve(options.outDir)
  // With pre-compressed copies for hosts that serve them (nginx gzip_static / brotli_static and the like).
  const assetFiles = await writeAssets(outDir, assets.values())
  await writeFile(join(outDir, 'index.html'), html)
  return ['index.html', ...assetFiles]
}
