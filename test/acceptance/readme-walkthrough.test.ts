// The README's walk-through, run as written by bash against `npm start`'s entry point: sample PDF, login with the code
// from the service's log, sign, verify through the service, from the chain and by the QR URL, pdfsig, history,
// logout. Two things differ from a reader's terminal, both for the port: the service listens on a free one, which
// the script's `http://127.0.0.1:3000` is replaced with and ANCHOR_URL names. It runs in a scratch directory inside
// the checkout, where `npx anchor` finds the workspace's command as it does in the checkout itself.
import { spawn } from 'node:child_process'
import { chmod, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { delimiter, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { answerAndWait } from '../helpers/processes/answered-process.ts'
import { type ServerProcess, startServerProcess } from '../helpers/processes/server-process.ts'

const ROOT = fileURLToPath(new URL('../..', import.meta.url))
const EMAIL = 'you@example.com'

/** The sh blocks of the README's walk-through section: the service's terminal, then the other one. */
async function walkthrough(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8')
  const section = /## Two-minute walk-through[^\n]*\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? ''
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((block) => block[1]!)
}

/** Resolves with the sign-in code the service logs for `email` (development mode, no SMTP_URL). */
function codeFromLog(server: ServerProcess, email: string): Promise<string> {
  const pattern = new RegExp(`Sign-in code for ${email.replaceAll('.', '\\.')}: (\\d{6})`)
  return new Promise((resolve, reject) => {
    const deadline = Date.now() + 30_000
    const look = () => {
      const code = server.output.map((line) => pattern.exec(line)?.[1]).findLast(Boolean)
      if (code) resolve(code)
      else if (Date.now() > deadline) reject(new Error(`no sign-in code logged:\n${server.output.join('\n')}`))
      else setTimeout(look, 50)
    }
    look()
  })
}

describe('the README walk-through', () => {
  let server: ServerProcess
  let work: string
  let home: string
  let dataDir: string

  beforeAll(async () => {
    work = await mkdtemp(join(ROOT, '.walkthrough-'))
    home = await mkdtemp(join(tmpdir(), 'anchor-walkthrough-home-'))
    dataDir = await mkdtemp(join(tmpdir(), 'anchor-walkthrough-data-'))
    // A file an older version left readable by all: the start takes it back (issue 38).
    await writeFile(join(dataDir, 'left-by-an-older-version'), 'x', { mode: 0o666 })
    await chmod(join(dataDir, 'left-by-an-older-version'), 0o666)
    // Started under a umask that hides nothing: what the service writes is still its user's alone.
    const umask = process.umask(0)
    const starting = startServerProcess({ DATA_DIR: dataDir })
    process.umask(umask)
    server = await starting
  })
  afterAll(async () => {
    await server?.stop()
    await Promise.all([work, home, dataDir].map((dir) => dir && rm(dir, { recursive: true, force: true })))
  })

  it('runs as written on Linux, every command succeeding', { timeout: 120_000 }, async () => {
    const [serviceTerminal, script] = await walkthrough()
    expect(serviceTerminal).toBe('npm start\n')
    expect(script).toContain('http://127.0.0.1:3000')

    const bash = spawn(
      'bash',
      ['-e', '-o', 'pipefail', '-c', script!.replaceAll('http://127.0.0.1:3000', server.url)],
      {
        cwd: work,
        env: {
          // The Node running the tests first: npm, npx and the command run on it.
          PATH: [dirname(process.execPath), process.env.PATH ?? ''].join(delimiter),
          HOME: home,
          ANCHOR_URL: server.url,
          npm_config_update_notifier: 'false',
        },
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    )
    // `anchor login` asks for the code on the terminal; the service logs it, having no mail server.
    const { code, output } = await answerAndWait(bash, codeFromLog(server, EMAIL))
    expect(code, output).toBe(0)

    expect(output).toContain(`Logged in to ${server.url} as ${EMAIL}`)
    expect(output).toMatch(/Signed contract\.pdf -> signed\.pdf \(signature 1, by Ada Lovelace\)/)
    expect(output.match(/Verified: the signature is valid\./g)).toHaveLength(2)
    expect(output).toContain('"valid": true')
    expect(output).toContain('Verified: the anchor and its payload match.')
    expect(output).toContain(`${server.url}/v/`)
    expect(output).toContain('Signature Validation: Signature is Valid.')
    expect(output).toMatch(/ {2}confirmed {2}0x[0-9a-f]{64}/)
    expect(output).toContain(`Logged out of ${server.url}.`)

    // Everything under DATA_DIR after a start and an anchor (the database, its WAL, the chain, the keys) is the
    // service user's alone.
    const shared = (await readdir(dataDir, { recursive: true, withFileTypes: true }))
      .map((entry) => join(entry.parentPath, entry.name))
      .concat(dataDir)
    const open = []
    for (const path of shared) {
      const mode = (await stat(path)).mode & 0o777
      if ((mode & 0o077) !== 0) open.push(`${path} ${mode.toString(8)}`)
    }
    expect(shared.length).toBeGreaterThan(100)
    expect(open).toEqual([])
  })
})
