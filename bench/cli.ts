// The `anchor` command's wall time and peak RSS against a bare `node -e 0` measured in the same run (median of RUNS,
// each process timed by /usr/bin/time): `anchor --help`, an argument error, `anchor sign` of a one-page PDF against a
// local service (embedded anvil and PGlite, started in this process and not timed), and `anchor verify` of what it
// signed, through that service. Then `anchor verify` of a 160-page PDF signed twice against the same verify without
// the allowed-changes analysis (issue 36): its wall time less the analysis's, timed in this process on the same file.
// And `anchor sign` at B-LTA (the default: a DSS and a document timestamp after the signature) against the same sign
// at B-T (issue 37), the cost of long-term validation.
import { execFile } from 'node:child_process'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib'
import { readPdfStructure } from '../packages/client/src/pdf/pdf-revisions.ts'
import { findRevisionChanges } from '../packages/client/src/pdf/revision-changes.ts'
import { findStructureProblems } from '../packages/client/src/pdf/revision-structure.ts'
import { startSession } from '../src/auth/sessions.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { users } from '../src/db/schema.ts'
import { startService } from '../src/service.ts'
import { atMost, median, printRatioTable } from './ratio-table.ts'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const ANCHOR = join(ROOT, 'packages/cli/bin/anchor.js')
const RUNS = 5

interface Usage {
  ms: number
  peakRssMb: number
}

const work = await mkdtemp(join(tmpdir(), 'anchor-bench-cli-'))
const timeFile = join(work, 'time.txt')

/** Runs `node <args>` under /usr/bin/time; the exit code must be `expectedExit`. */
async function measureNode(args: string[], env: Record<string, string>, expectedExit = 0): Promise<Usage> {
  const start = performance.now()
  const exitCode = await promisify(execFile)('/usr/bin/time', ['-f', '%M', '-o', timeFile, process.execPath, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: work, ...env },
  }).then(
    () => 0,
    (error: { code?: number; stderr?: string }) => {
      if (error.code !== expectedExit) throw new Error(`node ${args.join(' ')} exited ${error.code}: ${error.stderr}`)
      return error.code
    },
  )
  const ms = performance.now() - start
  if (exitCode !== expectedExit) throw new Error(`node ${args.join(' ')} exited ${exitCode}, expected ${expectedExit}`)
  // /usr/bin/time adds a "Command exited with non-zero status" line before the figure when the exit code is not 0.
  const kilobytes = Number((await readFile(timeFile, 'utf8')).trim().split('\n').at(-1))
  return { ms, peakRssMb: kilobytes / 1024 }
}

async function medianOf(run: () => Promise<Usage>): Promise<Usage> {
  await run() // warm the file cache
  const runs: Usage[] = []
  for (let i = 0; i < RUNS; i++) runs.push(await run())
  return { ms: median(runs.map((r) => r.ms)), peakRssMb: median(runs.map((r) => r.peakRssMb)) }
}

/** A contract of `pages` pages of text, each with a link annotation (one more object a page to compare). */
async function contractPdf(pages: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create()
  const font = await doc.embedFont(StandardFonts.Helvetica)
  for (let i = 0; i < pages; i++) {
    const page = doc.addPage([595, 842])
    for (let line = 0; line < 40; line++) {
      page.drawText(`Bench contract, page ${i + 1}, clause ${line + 1}: the parties agree.`, {
        x: 50,
        y: 780 - line * 18,
        font,
        size: 11,
      })
    }
    const link = doc.context.obj({
      Type: 'Annot',
      Subtype: 'Link',
      Rect: [50, 40, 200, 60],
      A: { S: 'URI', URI: PDFString.of('https://example.com/terms') },
    })
    page.node.set(PDFName.of('Annots'), doc.context.obj([doc.context.register(link)]))
  }
  return doc.save()
}

/** The allowed-changes analysis of `bytes`, alone: what issue 36 added to reading a signed file. */
async function analysisMs(bytes: Uint8Array): Promise<number> {
  const runs: number[] = []
  for (let i = 0; i <= RUNS; i++) {
    const structure = await readPdfStructure(bytes)
    const start = performance.now()
    await findRevisionChanges(structure, 1)
    await findStructureProblems(structure, 1)
    if (i > 0) runs.push(performance.now() - start)
  }
  return median(runs)
}

const config = loadConfig({
  DATA_DIR: join(work, 'data'),
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'silent',
  JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long',
})
const service = await startService(config)
try {
  const { database, jwt } = service.app.deps
  const [user] = await database.db.insert(users).values({ email: 'bench@example.com' }).returning()
  const { token } = await startSession(database.db, jwt, { id: user!.id, email: user!.email }, 'email')
  const input = join(work, 'in.pdf')
  await writeFile(input, await contractPdf(1))
  const cliEnv = { ANCHOR_TOKEN: token, ANCHOR_URL: service.url }

  const floor = await medianOf(() => measureNode(['-e', '0'], {}))
  const help = await medianOf(() => measureNode([ANCHOR, '--help'], {}))
  const usageError = await medianOf(() => measureNode([ANCHOR, 'sign'], {}, 2))
  let signs = 0
  const sign = await medianOf(() =>
    measureNode(
      [ANCHOR, 'sign', input, '-o', join(work, `out-${signs++}.pdf`), '--name', 'Bench Signer', '--again'],
      cliEnv,
    ),
  )
  const signBt = await medianOf(() =>
    measureNode(
      [
        ANCHOR,
        'sign',
        input,
        '-o',
        join(work, `out-${signs++}.pdf`),
        '--name',
        'Bench Signer',
        '--again',
        '--level',
        'B-T',
      ],
      cliEnv,
    ),
  )
  const verify = await medianOf(() => measureNode([ANCHOR, 'verify', join(work, 'out-0.pdf')], cliEnv))

  const long = join(work, 'long.pdf')
  await writeFile(long, await contractPdf(160))
  for (const [from, to] of [
    [long, join(work, 'long-1.pdf')],
    [join(work, 'long-1.pdf'), join(work, 'long-2.pdf')],
  ] as const) {
    await measureNode([ANCHOR, 'sign', from, '-o', to, '--name', 'Bench Signer'], cliEnv)
  }
  const longVerify = await medianOf(() => measureNode([ANCHOR, 'verify', join(work, 'long-2.pdf')], cliEnv))
  const analysis = await analysisMs(new Uint8Array(await readFile(join(work, 'long-2.pdf'))))

  const show = (usage: Usage) => `${usage.ms.toFixed(0)} ms, ${usage.peakRssMb.toFixed(0)} MB`
  const rows = [
    { path: '`anchor --help`, wall', usage: help, aim: 5 },
    { path: '`anchor sign` (no arguments), wall', usage: usageError, aim: 5 },
    { path: '`anchor sign` one-page PDF, wall', usage: sign, aim: 15 },
    { path: '`anchor verify` of it, wall', usage: verify, aim: 15 },
  ].flatMap(({ path, usage, aim }) => [
    { path, measured: show(usage), floor: show(floor), ...atMost(usage.ms / floor.ms, aim) },
    {
      path: path.replace('wall', 'peak RSS'),
      measured: `${usage.peakRssMb.toFixed(0)} MB`,
      floor: `${floor.peakRssMb.toFixed(0)} MB`,
      ...atMost(usage.peakRssMb / floor.peakRssMb, aim),
    },
  ])
  printRatioTable(`cli: median of ${RUNS}, floor = bare \`node -e 0\``, rows)
  const withoutAnalysis = longVerify.ms - analysis
  printRatioTable(`cli: median of ${RUNS}, floor = the same verify less the allowed-changes analysis`, [
    {
      path: '`anchor verify` 160 pages, 2 signatures, wall',
      measured: show(longVerify),
      floor: `${withoutAnalysis.toFixed(0)} ms (analysis ${analysis.toFixed(0)} ms)`,
      ...atMost(longVerify.ms / withoutAnalysis, 1.5),
    },
  ])
  printRatioTable(`cli: median of ${RUNS}, floor = the same sign at B-T (its signature timestamped, nothing after)`, [
    {
      path: '`anchor sign` one-page PDF at B-LTA (DSS + document timestamp), wall',
      measured: show(sign),
      floor: show(signBt),
      ...atMost(sign.ms / signBt.ms, 1.5),
    },
  ])
  const signRss = sign.peakRssMb <= 150
  console.log(`  anchor sign peak RSS ${sign.peakRssMb.toFixed(0)} MB (aim ≤ 150 MB: ${signRss ? 'ok' : 'MISSED'})`)
} finally {
  await service.stop()
  await rm(work, { recursive: true, force: true })
}
