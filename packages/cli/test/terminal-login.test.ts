// `anchor login` in a real terminal (a pseudo-terminal made by util-linux's `script`), as a person runs it: it asks
// for the code, and after the answer it exits by itself, whether the code was right or wrong. With stdin piped, the
// end of the input ends any read, so only a terminal shows a command that keeps reading (issue 39). And `anchor sign`
// there: a second signature of the same file is refused before anything is spent, and `history` names the file.
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SmtpInbox, startSmtpInbox } from '../../../test/auth/smtp-inbox.ts'
import { createTestApp, signInTestUser, type TestApp } from '../../../test/helpers/app.ts'
import { pdfLibDocument } from '../../client/test/pdf/portable-fixtures.ts'
import { runAnchor } from './helpers/run-anchor.ts'

const ANCHOR = fileURLToPath(new URL('../bin/anchor.js', import.meta.url))

let inbox: SmtpInbox
let t: TestApp
let url: string
let dir: string

beforeAll(async () => {
  inbox = await startSmtpInbox()
  t = await createTestApp({ env: { SMTP_URL: inbox.url, MAIL_FROM: 'Sign-in <sign-in@example.com>' } })
  url = await t.app.listen({ port: 0, host: '127.0.0.1' })
  dir = await mkdtemp(join(tmpdir(), 'anchor-tty-'))
}, 120_000)

afterAll(async () => {
  await t?.close()
  await inbox?.close()
  if (dir) await rm(dir, { recursive: true, force: true })
})

/** `anchor login` in a pseudo-terminal; each answer is typed once the next "Code: " prompt shows. */
async function loginInTerminal(email: string, answers: ((code: string) => string)[]) {
  const command = [process.execPath, ANCHOR, 'login', '--email', email, '--service', url].map(quote).join(' ')
  const child: ChildProcess = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), TERM: 'dumb' },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)))
  const prompts = () => output.split('Code: ').length - 1
  try {
    const code = await inbox.nextCode(email)
    for (const [i, answer] of answers.entries()) {
      await expect.poll(prompts, { timeout: 20_000 }).toBeGreaterThan(i)
      child.stdin!.write(`${answer(code)}\r`)
    }
    // A person does not press Ctrl-D: the command must end on its own.
    const ended = await Promise.race([
      exited,
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 15_000)),
    ])
    return { code: ended, output }
  } finally {
    child.kill('SIGKILL')
    child.stdin!.destroy()
  }
}

/** `anchor <argv>` in a pseudo-terminal, nothing typed; its exit code, or 'still running' after 60 s. */
async function runInTerminal(argv: string[], env: Record<string, string>) {
  const command = [process.execPath, ANCHOR, ...argv].map(quote).join(' ')
  const child = spawn('script', ['--quiet', '--return', '--command', command, '/dev/null'], {
    env: { ...process.env, TERM: 'dumb', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  })
  let output = ''
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString()
  })
  try {
    const code = await Promise.race([
      new Promise<number | null>((resolve) => child.on('exit', (exit) => resolve(exit))),
      new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 60_000)),
    ])
    return { code, output }
  } finally {
    child.kill('SIGKILL')
    child.stdin.destroy()
  }
}

const right = (sent: string) => sent
const wrong = (sent: string) => String((Number(sent) + 1) % 1_000_000).padStart(6, '0')

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

describe('anchor login in a terminal', () => {
  it('exits by itself after a right code', async () => {
    const { code, output } = await loginInTerminal('ada@example.com', [right])
    expect(output).toMatch(/Logged in to .* as ada@example\.com until /)
    expect(code).toBe(0)
  })

  it('asks again after a typo, and the same code then signs in', async () => {
    const { code, output } = await loginInTerminal('carol@example.com', [wrong, right])
    expect(output).toContain('That code is wrong (or expired): type it again (4 tries left).')
    expect(output).toMatch(/Logged in to .* as carol@example\.com until /)
    expect(code).toBe(0)
  })

  it('exits by itself once the code is spent by the service’s five wrong tries', async () => {
    const { code, output } = await loginInTerminal('bob@example.com', Array(5).fill(wrong))
    expect(output).toContain('1 try left')
    expect(output).toContain('wrong or expired code')
    expect(code).toBe(1)
  })

  it('says when to try again once the service limits new codes', async () => {
    let stderr = ''
    for (let attempt = 0; attempt < 10 && !stderr.includes('429'); attempt++) {
      ;({ stderr } = await runAnchor(
        ['login', '--email', 'dave@example.com', '--service', url],
        {
          XDG_CONFIG_HOME: join(dir, 'config'),
        },
        async () => '000000\n',
      ))
    }
    expect(stderr).toMatch(/429 RATE_LIMITED: .*; try again in \d+ (s|min)/)
  })
})

describe('anchor sign in a terminal', () => {
  it('refuses to sign the same file twice unless told --again, and history names the file each anchor wrote', async () => {
    const user = await signInTestUser(t)
    const env = { ANCHOR_URL: url, ANCHOR_TOKEN: user.token, XDG_CONFIG_HOME: join(dir, 'signer-config') }
    const lease = join(dir, 'lease.pdf')
    await writeFile(lease, await pdfLibDocument())
    const sign = (output: string, ...more: string[]) =>
      runInTerminal(['sign', lease, '-o', join(dir, output), '--name', 'Ada', '--level', 'B-T', ...more], env)
    const first = await sign('lease-1.pdf')
    expect(first.output).toContain('Signed ')
    expect(first.code).toBe(0)
    const again = await sign('lease-2.pdf')
    expect(again.output).toContain(`you already signed this same file (${lease}) on `)
    expect(again.output).toContain('add --again')
    expect(again.code).toBe(2)
    expect((await sign('lease-2.pdf', '--again')).code).toBe(0)
    const history = await runInTerminal(['history'], env)
    expect(history.output).toContain(join(dir, 'lease-1.pdf'))
    expect(history.output).toContain(join(dir, 'lease-2.pdf'))
    expect(history.code).toBe(0)
  }, 180_000)
})
