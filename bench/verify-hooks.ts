// Where the time of a cached GET /api/verify/:txHash goes: every target answers the same bytes with the same headers
// under autocannon (100 connections), each adding one part of the app's per-request work to a plain Fastify process,
// then the real app's bare route with one route-level part more, then the verify route itself, and last the verify
// route of the app logging at info (to /dev/null) with each REQUEST_LOG setting. Each figure is a ratio to the plain
// process in the same run; the cost of a part is the time per request it adds (1/rps − 1/rps plain).
// The server runs in a child process so that the load generator does not share its event loop.
import { spawn } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import cors from '@fastify/cors'
import Fastify, { type FastifyBaseLogger, type FastifyInstance, type FastifyReply } from 'fastify'
import pino from 'pino'
import { z } from 'zod'
import { setAnswerHeaders } from '../src/api/common-headers.ts'
import { registerCors, servicePolicy } from '../src/api/cors.ts'
import { createMetrics, registerHttpMetrics } from '../src/api/metrics.ts'
import { VERIFY_PATH_PREFIX } from '../src/api/routes/verify.ts'
import { openDatabase } from '../src/db/database.ts'
import { migrateDatabase } from '../src/db/migrate.ts'
import { loggerOptions } from '../src/logging.ts'
import { parseTxHashParam } from '../src/verify/tx-hash-param.ts'
import { startTestChain } from '../test/helpers/chain/anvil.ts'
import { anchorChain, indexAnchors } from '../test/verify/helpers/anchors.ts'
import { median } from './ratio-table.ts'
import { captureVerifyAnswer, type VerifyAnswer } from './verify-answer.ts'
import { benchApp, CONNECTIONS, load, nextMessage } from './verify-bench.ts'

const ROUND_SECONDS = 3
const ROUNDS = 3
const DEPTH = 10
if (process.argv.includes('--serve')) await serve()
else await measure()

async function serve(): Promise<void> {
  const silent = pino({ level: 'silent' }) as FastifyBaseLogger
  const testChain = await startTestChain()
  const database = await openDatabase({})
  await migrateDatabase(database)
  const anchored = await anchorChain(testChain, DEPTH)
  await indexAnchors(database.db, testChain, anchored)
  const tip = anchored.at(-1)!.txHash
  const app = await benchApp(database, testChain)
  const { config } = app.deps
  const verifyPath = `/api/verify/${tip}`
  // The verify answer, captured once the app is ready (routes must be added before).
  let answer: VerifyAnswer = { body: '', headers: {} }
  const send = (reply: FastifyReply) => reply.headers(answer.headers).send(answer.body)
  const ParamsSchema = z.object({ txHash: z.string().transform((value) => parseTxHashParam(value) ?? value) })
  const limit = app.limiter({ name: 'bench', max: 1_000_000_000, timeWindowMs: 60_000, what: 'requests' })
  app.get('/bench/bare', async (_request, reply) => send(reply))
  app.get('/bench/limited', { onRequest: limit.onRequest }, async (_request, reply) => send(reply))
  app.get('/bench/params/:txHash', { schema: { params: ParamsSchema } }, async (_request, reply) => send(reply))
  answer = await captureVerifyAnswer(app, tip)
  const appUrl = await app.listen({ port: 0, host: '127.0.0.1' })
  // The verification page builds once the app listens; measuring during that build would measure the build.
  await (await fetch(`${appUrl}/v/${tip}`)).text()

  // The same app logging at info, as a production instance does, to /dev/null: what each REQUEST_LOG costs.
  const loggingApps = await Promise.all(
    (['all', 'failed-or-slow'] as const).map(async (mode) => {
      const logger = pino(loggerOptions('info'), pino.destination('/dev/null')) as FastifyBaseLogger
      const logging = await benchApp(database, testChain, { LOG_LEVEL: 'info', REQUEST_LOG: mode }, undefined, logger)
      await logging.inject(verifyPath)
      return [mode, `${await logging.listen({ port: 0, host: '127.0.0.1' })}${verifyPath}`, logging] as const
    }),
  )

  const plains: FastifyInstance[] = []
  async function plain(setup?: (instance: FastifyInstance) => Promise<void> | void, logger = false) {
    const instance = logger ? Fastify({ loggerInstance: silent, requestIdHeader: false }) : Fastify()
    await setup?.(instance)
    // Sent as the app's hooks would leave them, so that every target writes the same bytes and headers.
    instance.get('/bench/bare', async (_request, reply) => send(reply))
    plains.push(instance)
    return `${await instance.listen({ port: 0, host: '127.0.0.1' })}/bench/bare`
  }
  const targets: [string, string][] = [
    ['plain Fastify', await plain()],
    ['+ pino logger (request id, child logger)', await plain(undefined, true)],
    [
      '+ the app’s CORS hook (src/api/cors.ts)',
      await plain((instance) => {
        const corsHeaders = registerCors(instance, servicePolicy(config.corsOrigins), [VERIFY_PATH_PREFIX])
        instance.addHook('onRequest', (request, reply, done) => {
          setAnswerHeaders(corsHeaders, request, reply)
          done()
        })
      }),
    ],
    [
      '+ @fastify/cors instead (the same policy)',
      await plain(async (instance) => {
        const policy = servicePolicy(config.corsOrigins)
        await instance.register(cors, {
          origin: policy.origins === '*' ? '*' : [...policy.origins],
          methods: [...policy.methods],
          allowedHeaders: [...policy.allowedHeaders],
          exposedHeaders: [...policy.exposedHeaders],
          maxAge: policy.maxAgeSeconds,
        })
      }),
    ],
    ['+ HTTP metrics', await plain((instance) => registerHttpMetrics(instance, createMetrics(), undefined))],
    ['app: bare route (every global hook)', `${appUrl}/bench/bare`],
    ['app: + per-IP limiter', `${appUrl}/bench/limited`],
    ['app: + zod path parameter', `${appUrl}/bench/params/${tip}`],
    ['app: GET /api/verify/:txHash, cached', `${appUrl}${verifyPath}`],
    ...loggingApps.map(([mode, url]) => [`the same, logging at info, REQUEST_LOG=${mode}`, url] as [string, string]),
  ]
  process.send!({ type: 'ready', targets })
  process.on('message', async (message: { type: string }) => {
    if (message.type !== 'stop') return
    for (const instance of plains) await instance.close()
    for (const [, , logging] of loggingApps) await logging.close()
    await app.close()
    await database.close()
    await testChain.stop()
    process.exit(0)
  })
}

async function measure(): Promise<void> {
  const child = spawn(
    process.execPath,
    ['--conditions=@docanchor/source', '--import', 'tsx', fileURLToPath(import.meta.url), '--serve'],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] },
  )
  try {
    const { targets } = await nextMessage<{ targets: [string, string][] }>(child, 'ready')
    for (const [, url] of targets) await load(url, 1)
    const rps = new Map<string, number[]>()
    for (let round = 0; round < ROUNDS; round++) {
      // Alternating the order cancels what running first or last in a round does to a target.
      for (const [name, url] of round % 2 === 0 ? targets : [...targets].reverse()) {
        rps.set(name, [...(rps.get(name) ?? []), (await load(url, ROUND_SECONDS)).requests.average])
      }
    }
    const plain = median(rps.get(targets[0]![0])!)
    console.log(
      `cached verify, part by part: ${CONNECTIONS} connections, median of ${ROUNDS} rounds of ${ROUND_SECONDS} s`,
    )
    console.log('| target | req/s | vs plain | µs per request over plain |')
    console.log('| --- | --- | --- | --- |')
    for (const [name] of targets) {
      const value = median(rps.get(name)!)
      const added = (1 / value - 1 / plain) * 1e6
      console.log(`| ${name} | ${value.toFixed(0)} | ${(value / plain).toFixed(2)} | ${added.toFixed(1)} |`)
    }
  } finally {
    if (child.connected) {
      child.send({ type: 'stop' })
      await new Promise((resolve) => child.once('exit', resolve))
    }
  }
}
