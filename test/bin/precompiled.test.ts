// packages/cli/bin/anchor.js (in the checkout) and bin/server.js run their build under dist/ only while every source
// it was built from is unchanged; otherwise the sources via tsx.
import { execFile } from 'node:child_process'
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import {
  buildManifest,
  PRECOMPILED_BUILDS,
  PRECOMPILED_TARGETS,
  type PrecompiledTarget,
  precompiledIsFresh,
  staleBuilds,
} from '../../src/precompiled-builds.js'

const PRECOMPILED_MODULE = pathToFileURL(
  fileURLToPath(new URL('../../src/precompiled-builds.js', import.meta.url)),
).href

describe.each(Object.entries(PRECOMPILED_TARGETS))('precompiledIsFresh (%s)', (_name, target) => {
  let root: string
  const source = () => join(root, target.source)

  async function recordBuild(): Promise<void> {
    const file = await stat(source())
    await mkdir(join(root, target.dir), { recursive: true })
    await writeFile(
      join(root, buildManifest(target)),
      JSON.stringify([{ path: target.source, size: file.size, mtimeMs: file.mtimeMs }]),
    )
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'anchor-precompiled-'))
    await mkdir(join(source(), '..'), { recursive: true })
    await writeFile(source(), 'export {}\n')
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('is fresh while every recorded source is unchanged', async () => {
    await recordBuild()
    expect(precompiledIsFresh(root, target)).toBe(true)
  })

  it('is stale without a build', () => {
    expect(precompiledIsFresh(root, target)).toBe(false)
  })

  it('is stale once a source is edited, even to the same size', async () => {
    await recordBuild()
    await writeFile(source(), 'export {} \n'.slice(0, 10))
    expect(precompiledIsFresh(root, target)).toBe(false)
  })

  it('is stale once a source is touched (a checkout of another version)', async () => {
    await recordBuild()
    const later = new Date(Date.now() + 60_000)
    await utimes(source(), later, later)
    expect(precompiledIsFresh(root, target)).toBe(false)
  })

  it('is stale once a source is deleted', async () => {
    await recordBuild()
    await rm(source())
    expect(precompiledIsFresh(root, target)).toBe(false)
  })

  it('stays fresh when a recorded dependency was pruned (a production install), not when it changed', async () => {
    const tool = join(root, 'node_modules/vite/package.json')
    await mkdir(join(tool, '..'), { recursive: true })
    await writeFile(tool, '{"version":"1.0.0"}')
    const [sourceFile, toolFile] = await Promise.all([stat(source()), stat(tool)])
    await mkdir(join(root, target.dir), { recursive: true })
    await writeFile(
      join(root, buildManifest(target)),
      JSON.stringify([
        { path: target.source, size: sourceFile.size, mtimeMs: sourceFile.mtimeMs },
        { path: 'node_modules/vite/package.json', size: toolFile.size, mtimeMs: toolFile.mtimeMs },
      ]),
    )
    await writeFile(tool, '{"version":"2.0.0"}')
    expect(precompiledIsFresh(root, target)).toBe(false)
    await rm(join(root, 'node_modules'), { recursive: true })
    expect(precompiledIsFresh(root, target)).toBe(true)
  })

  it('is stale when the manifest is unreadable or empty', async () => {
    await mkdir(join(root, target.dir), { recursive: true })
    await writeFile(join(root, buildManifest(target)), '[]')
    expect(precompiledIsFresh(root, target)).toBe(false)
    await writeFile(join(root, buildManifest(target)), '{not json')
    expect(precompiledIsFresh(root, target)).toBe(false)
  })
})

describe('staleBuilds', () => {
  it('names every build an empty checkout lacks, and none of a checkout whose builds match their sources', async () => {
    const root = await mkdtemp(join(tmpdir(), 'anchor-precompiled-'))
    try {
      expect(staleBuilds(root)).toEqual(Object.keys(PRECOMPILED_BUILDS))
      await mkdir(join(root, 'src'), { recursive: true })
      await writeFile(join(root, 'src/one.ts'), 'export {}\n')
      const file = await stat(join(root, 'src/one.ts'))
      for (const build of Object.values(PRECOMPILED_BUILDS)) {
        await mkdir(join(root, build.dir), { recursive: true })
        await writeFile(
          join(root, buildManifest(build)),
          JSON.stringify([{ path: 'src/one.ts', size: file.size, mtimeMs: file.mtimeMs }]),
        )
      }
      expect(staleBuilds(root)).toEqual([])
      await writeFile(join(root, buildManifest(PRECOMPILED_BUILDS.page)), '[]')
      expect(staleBuilds(root)).toEqual(['page'])
    } finally {
      await rm(root, { recursive: true, force: true })
    }
  })
})

describe('runPrecompiledOrSources', () => {
  const target: PrecompiledTarget = { dir: 'dist/tool', entry: 'tool', source: 'src/tool.ts' }
  let root: string

  /** Runs `target` of `root` in a child process, as a bin script does, and returns what it printed. */
  async function run(): Promise<string> {
    const script = `const { runPrecompiledOrSources } = await import(${JSON.stringify(PRECOMPILED_MODULE)})
      await runPrecompiledOrSources(${JSON.stringify(target)}, ${JSON.stringify(root)})`
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script])
    return stdout.trim()
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'anchor-precompiled-run-'))
    await mkdir(join(root, 'src'), { recursive: true })
    await writeFile(join(root, 'package.json'), '{ "type": "module" }\n')
    // Type annotations: only tsx runs this file.
    await writeFile(join(root, target.source), "const from: string = 'sources'\nconsole.log(from)\n")
    await mkdir(join(root, target.dir), { recursive: true })
    await writeFile(join(root, target.dir, `${target.entry}.js`), "console.log('build')\n")
    const file = await stat(join(root, target.source))
    await writeFile(
      join(root, buildManifest(target)),
      JSON.stringify([{ path: target.source, size: file.size, mtimeMs: file.mtimeMs }]),
    )
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('runs the build while it is fresh', async () => {
    expect(await run()).toBe('build')
  })

  it('runs the sources through tsx once one changed', async () => {
    const later = new Date(Date.now() + 60_000)
    await utimes(join(root, target.source), later, later)
    expect(await run()).toBe('sources')
  })
})
