// `npm start` serves from the precompiled build (dist/server/ and the page's dist/page/, made by `npm install`; the
// test run's global setup rebuilds them if a source changed): no TypeScript source and no tsx is loaded, no page is
// bundled. V8's coverage output names every script the process compiled, which tells exactly what ran without adding
// anything to the service for the test.
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, describe, expect, it } from 'vitest'
import { PRECOMPILED_PAGE, PRECOMPILED_TARGETS, precompiledIsFresh } from '../../src/precompiled-builds.js'
import { type ServerProcess, startServerProcess } from '../helpers/processes/server-process.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const target = PRECOMPILED_TARGETS.server

/** The URLs of every script process `pid` compiled, from the coverage file it wrote on exit. */
async function scriptsLoadedBy(coverageDir: string, pid: number): Promise<string[]> {
  const file = (await readdir(coverageDir)).find((name) => name.startsWith(`coverage-${pid}-`))
  if (file === undefined) throw new Error(`process ${pid} wrote no coverage file`)
  const coverage = JSON.parse(await readFile(join(coverageDir, file), 'utf8')) as { result: { url: string }[] }
  return coverage.result.map((script) => script.url)
}

describe('npm start', () => {
  const dirs: string[] = []
  let server: ServerProcess | undefined

  afterAll(async () => {
    await server?.stop('SIGKILL')
    await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true })))
  })

  it('serves from the precompiled build', async () => {
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      version: string
      scripts: { start: string }
    }
    expect(manifest.scripts.start).toBe('node bin/server.js')
    expect(precompiledIsFresh(ROOT, target)).toBe(true)
    expect(precompiledIsFresh(ROOT, PRECOMPILED_PAGE)).toBe(true)

    const dataDir = await mkdtemp(join(tmpdir(), 'anchor-precompiled-server-'))
    const coverageDir = await mkdtemp(join(tmpdir(), 'anchor-precompiled-coverage-'))
    dirs.push(dataDir, coverageDir)
    server = await startServerProcess({ DATA_DIR: dataDir, NODE_V8_COVERAGE: coverageDir })
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    // Paths the sources find through import.meta.url resolve from the build too: package.json (the version), the
    // migrations (a fresh start runs them), anvil's binary (the chain answers), the page's build (it is served).
    const info = (await (await fetch(`${server.url}/api/info`)).json()) as { version: string }
    expect(info.version).toBe(manifest.version)
    const page = await fetch(`${server.url}/v/bKpCcm5fZzH5YvZQFoRkEfyY7xok3CqkOtLxSwvUvSU`)
    expect(page.status).toBe(200)
    const script = /src="\.\.\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1]
    expect(script).toBeDefined()
    expect((await fetch(`${server.url}/${script}`)).status).toBe(200)
    const pid = server.child.pid!
    expect(await server.stop('SIGTERM')).toBe(0)

    // The page came from its build in dist/page/: no Node child process (Vite's) ran, which would have written its
    // own coverage file.
    expect((await readdir(coverageDir)).filter((name) => !name.startsWith(`coverage-${pid}-`))).toEqual([])
    const scripts = await scriptsLoadedBy(coverageDir, pid)
    const ours = scripts.filter((url) => url.startsWith(pathToFileURL(ROOT).href) && !url.includes('/node_modules/'))
    expect(ours).toContain(pathToFileURL(join(ROOT, target.dir, `${target.entry}.js`)).href)
    expect(ours.filter((url) => url.endsWith('.ts'))).toEqual([])
    expect(scripts.filter((url) => url.includes('/node_modules/tsx/'))).toEqual([])
  }, 120_000)
})
