// Entry point: `npx tsx src/web/build-static.ts --out dist/web --api-base https://anchors.example.com`.
import { resolve } from 'node:path'
import { parseArgs } from 'node:util'
import { buildStaticPage } from './static-build.ts'

const { values } = parseArgs({
  options: { out: { type: 'string', default: 'dist/web' }, 'api-base': { type: 'string', default: '' } },
})
try {
  const files = await buildStaticPage({ outDir: values.out, apiBase: values['api-base'] })
  console.log(`Wrote ${files.length} files to ${resolve(values.out)}`)
} catch (error) {
  console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
}
