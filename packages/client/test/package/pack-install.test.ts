// Installable as a user would: `npm pack -w @docanchor/client`, the tarball installed into an empty project with its
// dependencies from the registry alone, and the README's example run there against the real service (anvil, PGlite,
// a real SMTP inbox): it signs in with an e-mail code, signs a PDF, verifies it and decrypts the signer.

import { execFile, spawn } from 'node:child_process'
import { once } from 'node:events'
import { existsSync } from 'node:fs'
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SmtpInbox, startSmtpInbox } from '../../../../test/auth/smtp-inbox.ts'
import { createTestApp, type TestApp } from '../../../../test/helpers/app.ts'
import { pdfLibDocument } from '../pdf/portable-fixtures.ts'

const run = promisify(execFile)
const ROOT = fileURLToPath(new URL('../../../../', import.meta.url))
const README = new URL('../../README.md', import.meta.url)
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** The first ```js block after the README's `## Example` heading. */
async function readmeExample(): Promise<string> {
  const readme = await readFile(README, 'utf8')
  const example = /## Example\n[\s\S]*?```js\n([\s\S]*?)```/.exec(readme)?.[1]
  expect(example, 'the README has an example').toBeDefined()
  return example!
}

describe('the packed @docanchor/client', () => {
  let t: TestApp
  let inbox: SmtpInbox
  let baseUrl: string
  let project: string

  beforeAll(async () => {
    project = await mkdtemp(join(tmpdir(), 'docanchor-client-user-'))
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

  it('installs into an empty project and runs the README example against the service', {
    timeout: 240_000,
  }, async () => {
    await run(NPM, ['pack', '-w', '@docanchor/client', '--pack-destination', project], { cwd: ROOT })
    const [tarball] = (await readdir(project)).filter((name) => name.endsWith('.tgz'))
    expect(tarball).toMatch(/^docanchor-client-.*\.tgz$/)
    const listing = (await run('tar', ['-tzf', join(project, tarball!)])).stdout.split('\n')
    expect(listing).toContain('package/dist/index.js')
    expect(listing).toContain('package/dist/index.d.ts')
    expect(listing).toContain('package/README.md')
    expect(listing.filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts'))).toEqual([])
    // postpack removes the build again: in the repository the package is its sources, never a stale dist/.
    expect(existsSync(join(ROOT, 'packages/client/dist'))).toBe(false)

    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, type: 'module' }))
    await run(NPM, ['install', '--no-audit', '--no-fund', `./${tarball}`], { cwd: project })
    await writeFile(join(project, 'example.mjs'), await readmeExample())
    await writeFile(join(project, 'in.pdf'), await pdfLibDocument())

    const email = 'reader@example.com'
    const child = spawn(process.execPath, ['example.mjs', 'in.pdf', 'out.pdf', email], {
      cwd: project,
      env: { PATH: process.env.PATH ?? '', ANCHOR_URL: baseUrl },
      stdio: ['pipe', 'pipe', 'pipe'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      output += chunk.toString()
    })
    const exited = once(child, 'exit')
    child.stdin.end(`${await inbox.nextCode(email)}\n`)
    const [code] = await exited
    expect(output).toContain('valid: true')
    expect(output).toMatch(/signer: \{[^}]*n: 'Ada Lovelace'[^}]*e: 'reader@example\.com'/)
    expect(code, output).toBe(0)
    const signed = await readFile(join(project, 'out.pdf'))
    expect(signed.subarray(0, 5).toString()).toBe('%PDF-')
  })
})
