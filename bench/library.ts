// Library sync and read through the real app (inject: JSON parsing, validation, the batched transaction), each next
// to its floor measured in the same run through the same database driver: a plain multi-row INSERT of the same rows
// for a sync, a plain SELECT of the same rows for GET (and JSON.stringify of them, the naive serializer). Every case
// runs in a fresh child process so that its peak memory (max RSS growth) is its own. PGlite by default; PostgreSQL
// when DATABASE_URL is set.
import { spawnSync } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { fileURLToPath } from 'node:url'
import { type SQL, sql } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { buildApp } from '../src/api/app.ts'
import type { AppInstance } from '../src/api/app-types.ts'
import { startSession } from '../src/auth/sessions.ts'
import { loadConfig } from '../src/config/load-config.ts'
import { type Database, openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { users } from '../src/db/schema.ts'
import type { SignatureItem, SnippetItem } from '../src/library/library-types.ts'
import { startTestChain, testChainContext } from '../test/helpers/chain/anvil.ts'
import { createThrowawayDatabase } from '../test/helpers/db/throwaway-postgres.ts'

const SIGNATURES = 200
const SIGNATURE_BYTES = 50 * 1024
const SNIPPETS = 2_000
const SNIPPET_CHARACTERS = 500
const RUNS = 3

const CASES = [
  'sync-signatures',
  'floor-insert-signatures',
  'sync-snippets',
  'floor-insert-snippets',
  'get',
  'floor-select',
  'floor-select-stringify',
  'floor-static',
] as const
type Case = (typeof CASES)[number]

interface Result {
  ms: number
  peakMb: number
  bytes: number
}

const now = Date.now() - 60_000
const iso = (offset: number) => new Date(now + offset).toISOString()
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function signatures(): SignatureItem[] {
  return Array.from({ length: SIGNATURES }, (_, i) => ({
    id: crypto.randomUUID(),
    label: `Signature ${i}`,
    base64Png: Buffer.concat([PNG, randomBytes(SIGNATURE_BYTES - PNG.length)]).toString('base64'),
    updatedAt: iso(i),
    createdAt: iso(i),
  }))
}

function snippets(): SnippetItem[] {
  return Array.from({ length: SNIPPETS }, (_, i) => ({
    id: crypto.randomUUID(),
    label: `Snippet ${i}`,
    text: randomBytes(SNIPPET_CHARACTERS).toString('base64').slice(0, SNIPPET_CHARACTERS),
    fontSize: 11 + (i % 4),
    updatedAt: iso(i),
    createdAt: iso(i),
  }))
}

interface BenchApp {
  app: AppInstance
  db: Database
  close(): Promise<void>
}

/** The real app on a fresh database (PGlite in memory, or a throwaway PostgreSQL database) and a local anvil. */
async function startBenchApp(setup?: (app: AppInstance) => void): Promise<BenchApp> {
  const adminUrl = process.env.DATABASE_URL
  const throwaway = adminUrl ? await createThrowawayDatabase(adminUrl, 'anchor_bench') : undefined
  const handle = await openDatabase({ url: throwaway?.url })
  await migrateDatabase(handle)
  const testChain = await startTestChain()
  const config = loadConfig({ JWT_SECRET: 'bench-secret-that-is-at-least-32-bytes-long', LOG_LEVEL: 'silent' })
  const app = await buildApp({
    config,
    database: handle,
    chain: testChainContext(testChain),
    logger: pino({ level: 'silent' }) as FastifyBaseLogger,
  })
  setup?.(app)
  await app.ready()
  return {
    app,
    db: handle.db,
    async close() {
      await app.close()
      await handle.close()
      await throwaway?.drop()
      await testChain.stop()
    },
  }
}

async function signIn(t: BenchApp): Promise<{ id: string; headers: { authorization: string } }> {
  const email = `bench-${crypto.randomUUID()}@example.com`
  const [row] = await t.db.insert(users).values({ email }).returning()
  const session = await startSession(t.db, t.app.deps.jwt, { id: row!.id, email }, 'email')
  return { id: row!.id, headers: { authorization: `Bearer ${session.token}` } }
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

async function timed(work: () => Promise<number>): Promise<{ ms: number; bytes: number }> {
  const start = performance.now()
  const bytes = await work()
  return { ms: performance.now() - start, bytes }
}

async function syncBody(t: BenchApp, body: string): Promise<number> {
  const user = await signIn(t)
  const response = await t.app.inject({
    method: 'PUT',
    url: '/api/library/sync',
    headers: { ...user.headers, 'content-type': 'application/json' },
    payload: body,
  })
  if (response.statusCode !== 200)
    throw new Error(`sync answered ${response.statusCode}: ${response.body.slice(0, 300)}`)
  return Buffer.byteLength(body)
}

/** The same rows as one plain multi-row INSERT, no conflict handling, into a table of the same shape. */
async function plainInsert(db: Database, table: string, columns: string[], rows: unknown[][]): Promise<number> {
  const values = rows.map(
    (row) =>
      sql`(${sql.join(
        row.map((value) => sql`${value}`),
        sql`, `,
      )})`,
  )
  await db.execute(
    sql`INSERT INTO ${sql.raw(table)} (${sql.raw(columns.join(', '))}) VALUES ${sql.join(values, sql`, `)}`,
  )
  return 0
}

async function rowsOf(db: Database, statement: SQL): Promise<Record<string, unknown>[]> {
  return ((await db.execute(statement)) as unknown as { rows: Record<string, unknown>[] }).rows
}

async function runCase(name: Case): Promise<Result> {
  // The transport floor of GET: the same app answering a prebuilt JSON string of the library's size.
  let staticJson = ''
  const t = await startBenchApp((app) => {
    app.get('/bench/static', async (_request, reply) => reply.type('application/json; charset=utf-8').send(staticJson))
  })
  const db = t.db
  try {
    const timings: number[] = []
    let bytes = 0
    let measure: () => Promise<number>
    if (name === 'sync-signatures' || name === 'sync-snippets') {
      const bodies = Array.from({ length: RUNS + 1 }, () =>
        JSON.stringify(
          name === 'sync-signatures' ? { signatures: { upsert: signatures() } } : { snippets: { upsert: snippets() } },
        ),
      )
      measure = () => syncBody(t, bodies.pop()!)
    } else if (name === 'floor-insert-signatures' || name === 'floor-insert-snippets') {
      const kind = name === 'floor-insert-signatures' ? 'signatures' : 'snippets'
      await db.execute(
        sql.raw(
          `CREATE TABLE bench_${kind} (user_id uuid, id uuid, label text, ${
            kind === 'signatures' ? 'base64_png text' : 'text text, font_size float8'
          }, updated_at timestamptz, created_at timestamptz)`,
        ),
      )
      const batches = Array.from({ length: RUNS + 1 }, () => {
        const userId = crypto.randomUUID()
        return kind === 'signatures'
          ? signatures().map((s) => [userId, s.id, s.label, s.base64Png, s.updatedAt, s.createdAt])
          : snippets().map((s) => [userId, s.id, s.label, s.text, s.fontSize, s.updatedAt, s.createdAt])
      })
      const columns =
        kind === 'signatures'
          ? ['user_id', 'id', 'label', 'base64_png', 'updated_at', 'created_at']
          : ['user_id', 'id', 'label', 'text', 'font_size', 'updated_at', 'created_at']
      measure = () => plainInsert(db, `bench_${kind}`, columns, batches.pop()!)
    } else {
      const user = await signIn(t)
      // The full library belongs to one user: load it through the route, in two syncs under the body limit.
      for (const body of [{ signatures: { upsert: signatures() } }, { snippets: { upsert: snippets() } }]) {
        const response = await t.app.inject({
          method: 'PUT',
          url: '/api/library/sync',
          headers: user.headers,
          payload: body,
        })
        if (response.statusCode !== 200) throw new Error(`setup sync answered ${response.statusCode}`)
      }
      const select = async () => [
        await rowsOf(
          db,
          sql`SELECT id, label, base64_png, updated_at, created_at FROM cloud_signatures WHERE user_id = ${user.id} AND deleted_at IS NULL`,
        ),
        await rowsOf(
          db,
          sql`SELECT id, label, text, font_size, updated_at, created_at FROM cloud_text_snippets WHERE user_id = ${user.id} AND deleted_at IS NULL`,
        ),
      ]
      if (name === 'get') {
        measure = async () => {
          const response = await t.app.inject({ url: '/api/library', headers: user.headers })
          if (response.statusCode !== 200) throw new Error(`GET answered ${response.statusCode}`)
          return response.rawPayload.length
        }
      } else if (name === 'floor-static') {
        const [sigs, snips] = await select()
        staticJson = JSON.stringify({ signatures: sigs, snippets: snips })
        measure = async () => {
          const response = await t.app.inject({ url: '/bench/static', headers: user.headers })
          if (response.statusCode !== 200) throw new Error(`static answered ${response.statusCode}`)
          return response.rawPayload.length
        }
      } else if (name === 'floor-select') {
        measure = async () => (await select()).reduce((n, rows) => n + rows.length, 0)
      } else {
        measure = async () => {
          const [sigs, snips] = await select()
          return Buffer.byteLength(JSON.stringify({ signatures: sigs, snippets: snips }))
        }
      }
    }
    // Peak memory includes the warm-up run (plans, JIT, pool): after it, the peak would already be reached.
    const baseline = process.resourceUsage().maxRSS
    await measure()
    for (let run = 0; run < RUNS; run++) {
      const result = await timed(measure)
      timings.push(result.ms)
      bytes = result.bytes
    }
    const peakMb = (process.resourceUsage().maxRSS - baseline) / 1024
    return { ms: median(timings), peakMb, bytes }
  } finally {
    await t.close()
  }
}

if (process.argv[2] === '--case') {
  const result = await runCase(process.argv[3] as Case)
  console.log(JSON.stringify(result))
  process.exit(0)
}

const results = new Map<Case, Result>()
for (const name of CASES) {
  // The workspace packages from their sources, as bench/run.ts runs every bench: their builds may not exist.
  const args = ['--conditions=@docanchor/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--case', name]
  const child = spawnSync(process.execPath, args, { encoding: 'utf8', timeout: 300_000, maxBuffer: 1 << 20 })
  const line = child.stdout.trim().split('\n').at(-1) ?? ''
  if (child.status !== 0 || !line.startsWith('{')) {
    console.error(`case ${name} failed:\n${child.stderr}`)
    process.exit(1)
  }
  results.set(name, JSON.parse(line) as Result)
}

const r = (name: Case) => results.get(name)!
const fmt = (ms: number) => `${ms.toFixed(1)} ms`
const mb = (value: number) => `${value.toFixed(1)} MB`
const database = process.env.DATABASE_URL ? 'PostgreSQL' : 'PGlite'
console.log(`library (${database}; median of ${RUNS}; peak = max RSS growth of the case's process)`)
for (const [label, sync, floor] of [
  [`sync ${SIGNATURES} × ${SIGNATURE_BYTES / 1024} KB signatures`, 'sync-signatures', 'floor-insert-signatures'],
  [`sync ${SNIPPETS} snippets`, 'sync-snippets', 'floor-insert-snippets'],
] as const) {
  const a = r(sync)
  const b = r(floor)
  console.log(
    `${label}: ${fmt(a.ms)}, peak ${mb(a.peakMb)} (body ${mb(a.bytes / 1e6)}) | plain multi-row INSERT ${fmt(b.ms)}, peak ${mb(b.peakMb)} | ratio ${(a.ms / b.ms).toFixed(2)}× time`,
  )
}
const get = r('get')
console.log(
  `GET full library (${SIGNATURES} signatures + ${SNIPPETS} snippets, ${mb(get.bytes / 1e6)}): ${fmt(get.ms)}, peak ${mb(get.peakMb)} | ` +
    `plain SELECT ${fmt(r('floor-select').ms)} (ratio ${(get.ms / r('floor-select').ms).toFixed(2)}×) | ` +
    `inject of a prebuilt string of that size ${fmt(r('floor-static').ms)} | ` +
    `SELECT + static inject ${fmt(r('floor-select').ms + r('floor-static').ms)} (ratio ${(get.ms / (r('floor-select').ms + r('floor-static').ms)).toFixed(2)}×) | ` +
    `SELECT + JSON.stringify ${fmt(r('floor-select-stringify').ms)}, peak ${mb(r('floor-select-stringify').peakMb)} (ratio ${(get.ms / r('floor-select-stringify').ms).toFixed(2)}×)`,
)
