// Installable as a user would: `npm pack` of @docanchor/client and @docanchor/cli, both tarballs installed into an
// empty project (their other dependencies from the npm cache or the registry), and there, against the real service
// (anvil, PGlite, a real SMTP inbox): the client README's example signs in with an e-mail code, signs a PDF, verifies
// it and decrypts the signer; then the installed `anchor` command verifies that PDF through the service, from the
// chain with --contract, and from the chain with a pinned contract; installed globally as the CLI README says, the
// `anchor` on PATH verifies it too. Both packages are packed and installed in this one file: two files packing the
// client at once would race on its dist/. Run on whichever Node runs the tests, so that .ci/run's second run checks
// the tarballs on the newest LTS.

import { execFile, spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { appendFile, copyFile, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { pdfLibDocument } from '../../packages/client/test/pdf/portable-fixtures.ts'
import { type SmtpInbox, startSmtpInbox } from '../auth/smtp-inbox.ts'
import { createTestApp, type TestApp } from '../helpers/app.ts'
import { answerAndWait } from '../helpers/processes/answered-process.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../', import.meta.url))
const CLIENT_README = join(ROOT, 'packages/client/README.md')
/** The Node running the tests comes first, so that npm and the installed `anchor` (`#!/usr/bin/env node`) run on it. */
const PATH = [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter)

/** The first ```js block after the README's `## Example` heading. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(CLIENT_README, 'utf8')
  const example = /## Example\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
  expect(example, 'the README has an example').toBeDefined()
  return example!
}

/** The files of a tarball, without tar's `package/` prefix. */
async function listing(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball])
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((name) => name.replace(/^package\//, ''))
}

describe('the packed @docanchor/client and @docanchor/cli', () => {
  let t: TestApp
  let inbox: SmtpInbox
  let baseUrl: string
  let project: string
  /** The packed tarballs' names, in the project directory. */
  let tarballs: string[]
  /** An empty home for the installed command: no stored login, no pins, no service configured. */
  let configHome: string

  /** Runs the installed `anchor` in the project, with `env` and nothing else configured. */
  const anchor = (args: string[], env: Record<string, string> = {}) =>
    run(join(project, 'node_modules/.bin/anchor'), args, {
      cwd: project,
      env: { PATH, HOME: configHome, XDG_CONFIG_HOME: configHome, ...env },
    }).then(
      ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
      (error: { code: number; stdout: string; stderr: string }) => error,
    )

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'docanchor-packages-user-'))
    configHome = join(project, '.home')
    await mkdir(configHome)
    inbox = await startSmtpInbox()
    t = await createTestApp({
      env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sign-in <sign-in@example.com>', VERIFY_BASE_URL: 'https://v.example' },
    })
    baseUrl = await t.app.listen({ port: 0, host: '127.0.0.1' })
  })
  afterAll(async () => {
    await t?.close()
    await inbox?.close()
    await rm(project, { recursive: true, force: true })
  })

  it('pack into tarballs of compiled JavaScript with their README and license', { timeout: 180_000 }, async () => {
    await run('npm', ['pack', '-w', '@docanchor/client', '-w', '@docanchor/cli', '--pack-destination', project], {
      cwd: ROOT,
      env: { ...process.env, PATH },
    })
    tarballs = (await readdir(project)).filter((name) => name.endsWith('.tgz')).sort()
    expect(tarballs).toEqual([
      expect.stringMatching(/^docanchor-cli-.*\.tgz$/),
      expect.stringMatching(/^docanchor-client-/),
    ])
    const [cli, client] = await Promise.all(tarballs.map((tarball) => listing(join(project, tarball))))
    expect(client).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'README.md', 'LICENSE']))
    expect(cli).toEqual(expect.arrayContaining(['bin/anchor.js', 'dist/anchor.js', 'README.md', 'LICENSE']))
    for (const files of [client!, cli!]) {
      expect(files.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))).toEqual([])
    }
    // postpack removes the builds again: in the repository the packages are their sources, never a stale dist/.
    expect(existsSync(join(ROOT, 'packages/client/dist'))).toBe(false)
    expect(existsSync(join(ROOT, 'packages/cli/dist'))).toBe(false)

    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
    // --prefer-offline: the dependencies are the repository's own versions, which its install left in npm's cache.
    await run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--prefer-offline', ...tarballs.map((name) => `./${name}`)],
      {
        cwd: project,
        env: { ...process.env, PATH },
      },
    )
  })

  it('installs the client, whose README example signs a PDF against the service', { timeout: 60_000 }, async () => {
    await writeFile(join(project, 'example.mjs'), await readmeExample())
    await writeFile(join(project, 'in.pdf'), await pdfLibDocument())

    const email = 'reader@example.com'
    const child = spawn(process.execPath, ['example.mjs', 'in.pdf', 'signed.pdf', email], {
      cwd: project,
      env: { PATH, ANCHOR_URL: baseUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    const { code, output } = await answerAndWait(child, inbox.nextCode(email))
    expect(output).toContain('valid: true')
    expect(output).toMatch(/signer: \{[^}]*n: 'Ada Lovelace'[^}]*e: 'reader@example\.com'/)
    expect(code, output).toBe(0)
  })

  it('installs the anchor command, which verifies that PDF through the service', async () => {
    const verified = await anchor(['verify', 'signed.pdf'], { ANCHOR_URL: baseUrl })
    expect(verified.stdout).toContain("(from the service's /api/info)")
    expect(verified.stdout).toMatch(/Verified: the signature is valid\.\n$/)
    expect(verified.code, verified.stderr).toBe(0)

    await copyFile(join(project, 'signed.pdf'), join(project, 'extended.pdf'))
    await appendFile(join(project, 'extended.pdf'), '\n% added after the signature\n')
    const extended = await anchor(['verify', 'extended.pdf'], { ANCHOR_URL: baseUrl })
    expect(extended.stdout).toMatch(/NOT VERIFIED\.\n$/)
    expect(extended.code).toBe(1)
  })

  it('installs globally as the CLI README says, and the `anchor` on PATH verifies that PDF', {
    timeout: 120_000,
  }, async () => {
    // The README's command, into a prefix of its own rather than the machine's global one, and outside the project:
    // nothing the project installed can stand in for what the global install lacks.
    const prefix = await mkdtemp(join(tmpdir(), 'docanchor-global-'))
    try {
      const packed = tarballs.map((name) => join(project, name))
      await run(
        'npm',
        ['install', '-g', '--prefix', prefix, '--no-audit', '--no-fund', '--prefer-offline', ...packed],
        {
          cwd: prefix,
          env: { ...process.env, PATH },
        },
      )
      const verified = await run('anchor', ['verify', join(project, 'signed.pdf')], {
        cwd: prefix,
        env: { PATH: [join(prefix, 'bin'), PATH].join(delimiter), HOME: configHome, ANCHOR_URL: baseUrl },
      })
      expect(verified.stdout).toMatch(/Verified: the signature is valid\.\n$/)
    } finally {
      await rm(prefix, { recursive: true, force: true })
    }
  })

  it('verifies it from the chain with --rpc and --contract, and with a pinned contract, no service configured', async () => {
    const { rpcUrl, contract } = t.testChain
    const withContract = await anchor(['verify', 'signed.pdf', '--rpc', rpcUrl, '--contract', contract])
    expect(withContract.stdout).toContain('(from --contract)')
    expect(withContract.code, withContract.stdout + withContract.stderr).toBe(0)

    const unpinned = await anchor(['verify', 'signed.pdf', '--rpc', rpcUrl, '--json'])
    expect(JSON.parse(unpinned.stdout)).toMatchObject({ error: { code: 'CONTRACT_UNTRUSTED' } })
    expect(unpinned.code).toBe(2)

    const pinned = await anchor(['pin', contract, '--chain-id', String(t.testChain.chain.id)])
    expect(pinned.code, pinned.stderr).toBe(0)
    const fromPins = await anchor(['verify', 'signed.pdf', '--rpc', rpcUrl])
    expect(fromPins.stdout).toContain('(from your pins)')
    expect(fromPins.stdout).toMatch(/Verified: the signature is valid\.\n$/)
    expect(fromPins.code, fromPins.stderr).toBe(0)
  })
})
