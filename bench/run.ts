// `npm run bench`: runs every benchmark in bench/ one after another (they share two cores; never in parallel),
// or only those named on the command line: `npm run bench -- verify relay`.
import { spawnSync } from 'node:child_process'
import { readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { staleBuilds } from '../src/precompiled-builds.js'

const dir = fileURLToPath(new URL('.', import.meta.url))
const root = fileURLToPath(new URL('..', import.meta.url))
// The figures are those of `npm start` and `anchor` on a fresh clone, which run the precompiled builds: an edited
// checkout would run its sources through tsx instead, and the start-up and CLI figures would measure tsx.
const stale = staleBuilds(root)
if (stale.length > 0) {
  console.log(`Rebuilding the precompiled builds that no longer match their sources first: ${stale.join(', ')}.`)
  const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/precompile.ts', ...stale], {
    cwd: root,
    stdio: 'inherit',
  })
  if (build.status !== 0) process.exit(1)
}
const all = readdirSync(dir)
  .filter((file) => file.endsWith('.ts') && file !== 'run.ts')
  .map((file) => file.replace(/\.ts$/, ''))
  .sort()
const wanted = process.argv.slice(2)
const selected = wanted.length > 0 ? all.filter((name) => wanted.includes(name)) : all
let failed = 0
for (const name of selected) {
  console.log(`\n=== bench/${name}.ts`)
  const result = spawnSync(
    process.execPath,
    ['--conditions=@docanchor/source', '--import', 'tsx', `${dir}${name}.ts`],
    { stdio: 'inherit' },
  )
  if (result.status !== 0) failed += 1
}
process.exit(failed === 0 ? 0 : 1)
