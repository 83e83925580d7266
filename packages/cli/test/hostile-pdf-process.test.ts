// Hostile PDFs through the real `anchor` command, in its own process measured by /usr/bin/time as a user would:
// each ends within seconds, in a few hundred MB at most, with exit code 2 and one line naming the damage.
import { execFile } from 'node:child_process'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { HOSTILE_FILES } from '../../client/test/pdf/hostile-files.ts'

/** The command's own baseline is ~100 MB; the files claim gigabytes. */
const MAX_RSS_KB = 400 * 1024
/** Wall time, process start included (through tsx when the precompiled build is stale: about a second). */
const MAX_SECONDS = 8

let dir: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'anchor-hostile-'))
})

afterAll(async () => {
  if (dir) await rm(dir, { recursive: true, force: true })
})

interface Measured {
  code: number
  stdout: string
  /** What the command wrote to stderr, without time's own line. */
  stderr: string
  maxRssKb: number
  seconds: number
}

/** `/usr/bin/time -f '%M %e' node packages/cli/bin/anchor.js ...args`; time writes its line last on stderr. */
function measured(args: string[]): Promise<Measured> {
  return new Promise((resolve, reject) => {
    execFile(
      '/usr/bin/time',
      ['-f', 'rss=%M elapsed=%e', process.execPath, 'packages/cli/bin/anchor.js', ...args],
      { env: { ...process.env, XDG_CONFIG_HOME: join(dir, 'config'), ANCHOR_URL: 'http://127.0.0.1:1' } },
      (error, stdout, stderr) => {
        const match = /rss=(\d+) elapsed=([\d.]+)\n$/.exec(stderr)
        if (!match) return reject(error ?? new Error(`no measurement in ${stderr}`))
        const code = error ? ((error as { code?: number }).code ?? -1) : 0
        resolve({
          code,
          stdout,
          stderr: stderr.slice(0, match.index).replace(/Command exited with non-zero status \d+\n$/, ''),
          maxRssKb: Number(match[1]),
          seconds: Number(match[2]),
        })
      },
    )
  })
}

describe('anchor verify on hostile PDFs, in a process of its own', () => {
  for (const [index, [name, make]] of HOSTILE_FILES.entries()) {
    it(`ends ${name} with exit code 2 and one line, in bounded time and memory`, async () => {
      const path = join(dir, `hostile-${index}.pdf`)
      await writeFile(path, make())
      const run = await measured(['verify', path])
      expect(run.stderr).toMatch(/^anchor verify: the PDF is damaged[^\n]+\n$/)
      expect(run.stderr).not.toMatch(/\/work\/|node_modules|\.ts:\d+/)
      expect(run.stdout).toBe('')
      expect(run.code).toBe(2)
      expect(run.maxRssKb).toBeLessThan(MAX_RSS_KB)
      expect(run.seconds).toBeLessThan(MAX_SECONDS)
    })
  }
})
