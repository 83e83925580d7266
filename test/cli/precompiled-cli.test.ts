// bin/anchor.js runs dist/cli/ only while every source it was built from is unchanged; otherwise the sources via tsx.
import { mkdir, mkdtemp, rm, stat, utimes, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'
import { CLI_BUILD_MANIFEST, precompiledCliIsFresh } from '../../bin/precompiled-cli.js'

describe('precompiledCliIsFresh', () => {
  let root: string
  const source = () => join(root, 'src/cli/anchor.ts')

  async function recordBuild(): Promise<void> {
    const file = await stat(source())
    await mkdir(join(root, 'dist/cli'), { recursive: true })
    await writeFile(
      join(root, CLI_BUILD_MANIFEST),
      JSON.stringify([{ path: 'src/cli/anchor.ts', size: file.size, mtimeMs: file.mtimeMs }]),
    )
  }

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'anchor-precompiled-'))
    await mkdir(join(root, 'src/cli'), { recursive: true })
    await writeFile(source(), 'export {}\n')
  })
  afterEach(() => rm(root, { recursive: true, force: true }))

  it('is fresh while every recorded source is unchanged', async () => {
    await recordBuild()
    expect(precompiledCliIsFresh(root)).toBe(true)
  })

  it('is stale without a build', () => {
    expect(precompiledCliIsFresh(root)).toBe(false)
  })

  it('is stale once a source is edited, even to the same size', async () => {
    await recordBuild()
    await writeFile(source(), 'export {} \n'.slice(0, 10))
    expect(precompiledCliIsFresh(root)).toBe(false)
  })

  it('is stale once a source is touched (a checkout of another version)', async () => {
    await recordBuild()
    const later = new Date(Date.now() + 60_000)
    await utimes(source(), later, later)
    expect(precompiledCliIsFresh(root)).toBe(false)
  })

  it('is stale once a source is deleted', async () => {
    await recordBuild()
    await rm(source())
    expect(precompiledCliIsFresh(root)).toBe(false)
  })

  it('is stale when the manifest is unreadable or empty', async () => {
    await mkdir(join(root, 'dist/cli'), { recursive: true })
    await writeFile(join(root, CLI_BUILD_MANIFEST), '[]')
    expect(precompiledCliIsFresh(root)).toBe(false)
    await writeFile(join(root, CLI_BUILD_MANIFEST), '{not json')
    expect(precompiledCliIsFresh(root)).toBe(false)
  })
})
