// A production install as docs/operations.md writes it: the checkout's files, `npm ci` (which builds dist/), then
// `npm prune --omit=dev`. No build tool is left (tsx, Vite, esbuild), and the service, its page and an
// operator's command run from the builds alone. Once per test run (the README's, on PGlite): it installs from the npm
// cache, which takes a minute or two, and what it checks does not depend on the database engine.
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { cp, mkdir, mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { testPostgresUrl } from '../helpers/db/database.ts'
import { type ServerProcess, startServerProcess } from '../helpers/processes/server-process.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../..', import.meta.url))
/** The Node running the tests first, so that npm and its scripts run on it. */
const PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter)
/**
 * TypeScript is not among them: viem, abitype and ox name it as an optional peer (for their types), and npm keeps an
 * optional peer that is installed (`--omit=optional` would drop anvil's platform build as well). Nothing runs it.
 */
const BUILD_TOOLS = ['tsx', 'vite', 'esbuild', 'rolldown', '@biomejs/biome', 'drizzle-kit', 'solc', 'vitest']

describe.runIf(testPostgresUrl === undefined)('a production install (npm ci, then npm prune --omit=dev)', () => {
  let install: string
  let server: ServerProcess | undefined

  beforeAll(async () => {
    install = await mkdtemp(join(tmpdir(), 'anchor-production-install-'))
    // What a clone of this checkout holds, uncommitted changes included: tracked and unignored files.
    const { stdout } = await run('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], {
      cwd: ROOT,
      maxBuffer: 16 * 1024 * 1024,
    })
    for (const file of stdout.split('\0').filter((path) => path !== '' && existsSync(join(ROOT, path)))) {
      await mkdir(dirname(join(install, file)), { recursive: true })
      await cp(join(ROOT, file), join(install, file))
    }
    const env = { ...process.env, PATH, npm_config_audit: 'false', npm_config_fund: 'false' }
    await run('npm', ['ci', '--prefer-offline'], { cwd: install, env, maxBuffer: 64 * 1024 * 1024 })
    await run('npm', ['prune', '--omit=dev'], { cwd: install, env, maxBuffer: 64 * 1024 * 1024 })
  }, 600_000)
  afterAll(async () => {
    await server?.stop('SIGKILL')
    if (install) await rm(install, { recursive: true, force: true })
  })

  it('holds no build tool', () => {
    expect(BUILD_TOOLS.filter((name) => existsSync(join(install, 'node_modules', name)))).toEqual([])
  })

  it('serves the API and the verification page from its builds', async () => {
    server = await startServerProcess({ DATA_DIR: join(install, 'data') }, 120_000, install)
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200)
    const page = await fetch(`${server.url}/v/bKpCcm5fZzH5YvZQFoRkEfyY7xok3CqkOtLxSwvUvSU`)
    expect(page.status).toBe(200)
    const script = /src="\.\.\/(assets\/[^"]+\.js)"/.exec(await page.text())?.[1]
    expect((await fetch(`${server.url}/${script}`)).status).toBe(200)
    expect(await server.stop('SIGTERM')).toBe(0)
  }, 180_000)

  it('runs an operator command from its build, and ends', async () => {
    const outcome = await run(process.execPath, ['bin/admin.js', 'users', 'show', 'nobody@example.com'], {
      cwd: install,
      env: { PATH, HOME: process.env.HOME ?? '', DATA_DIR: join(install, 'data') },
      timeout: 120_000,
    }).then(
      () => ({ code: 0, stderr: '' }),
      (error: { code?: number; stderr?: string }) => ({ code: error.code, stderr: error.stderr ?? '' }),
    )
    expect(outcome.stderr).toContain('admin: no account "nobody@example.com"')
    expect(outcome.code).toBe(1)
  }, 180_000)

  it('says what to do when a build no longer matches its sources, having nothing to run them with', async () => {
    await rm(join(install, 'dist/admin/inputs.json'))
    const outcome = await run(process.execPath, ['bin/admin.js', 'users', 'show', 'nobody@example.com'], {
      cwd: install,
      env: { PATH, HOME: process.env.HOME ?? '' },
      timeout: 60_000,
    }).then(
      () => ({ stderr: '' }),
      (error: { stderr?: string }) => ({ stderr: error.stderr ?? '' }),
    )
    expect(outcome.stderr).toContain('dist/admin/ is missing or no longer matches the sources')
    expect(outcome.stderr).toContain('npm run build')
  }, 120_000)

  it('refuses to serve a verification page it has no build of, saying how to build one', async () => {
    await rm(join(install, 'dist/page/inputs.json'))
    // The install's own module, so that it looks for the build in the install.
    const installed: typeof import('../../src/web/build-assets.ts') = await import(
      join(install, 'src/web/build-assets.ts')
    )
    await expect(installed.buildWebAssets({ prebuiltOnly: true })).rejects.toThrow(
      /dist\/page\/ is missing or no longer matches its sources[\s\S]*npm run build/,
    )
  })
})
