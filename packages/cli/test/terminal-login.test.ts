// `anchor login` in a real terminal (a pseudo-terminal made by util-linux's `script`), as a person runs it: it asks
// for the code, and after the answer it exits by itself, whether the code was right or wrong. With stdin piped, the
// end of the input ends any read, so only a terminal shows a command that keeps reading (issue 39).
import { type ChildProcess, spawn } from 'node:child_process'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type SmtpInbox, startSmtpInbox } from '../../../test/auth/smtp-inbox.ts'
import { createTestApp, type TestApp } from '../../../test/helpers/app.ts'

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

/** `anchor login` in a pseudo-terminal; the answer to "Code: " is typed once the prompt shows. */
async function loginInTerminal(email: string, answer: (code: string) => string) {
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
  try {
    await expect.poll(() => output, { timeout: 20_000 }).toContain('Code: ')
    child.stdin!.write(`${answer(await inbox.nextCode(email))}\r`)
    // A person does not press Ctrl-D: the command must end on its own.
    const code = await Promise.race([
      exited,
      new Promise<'still running'>((r) => setTimeout(() => r('still running'), 15_000)),
    ])
    return { code, output }
  } finally {
    child.kill('SIGKILL')
    child.stdin!.destroy()
  }
}

const quote = (word: string) => `'${word.replace(/'/g, `'\\''`)}'`

describe('anchor login in a terminal', () => {
  it('exits by itself after a right code', async () => {
    const { code, output } = await loginInTerminal('ada@example.com', (sent) => sent)
    expect(output).toMatch(/Logged in to .* as ada@example\.com until /)
    expect(code).toBe(0)
  })

  it('exits by itself after a wrong code', async () => {
    const { code, output } = await loginInTerminal('bob@example.com', (sent) =>
      String((Number(sent) + 1) % 1_000_000).padStart(6, '0'),
    )
    expect(output).toContain('wrong or expired code')
    expect(code).toBe(1)
  })
})
