import Fastify, { LogController } from 'fastify'
import { describe, expect, it } from 'vitest'
import { lazyRequestLogger, requestLoggerFactory } from '../../src/api/lazy-child-logger.ts'
import { captureLogs } from '../helpers/log-capture.ts'

async function appLoggingAt(level: string) {
  const capture = captureLogs(level)
  const app = Fastify({
    loggerInstance: capture.logger,
    childLoggerFactory: lazyRequestLogger,
    logController: new LogController({ disableRequestLogging: true }),
  })
  const children: number[] = []
  const { child } = capture.logger
  // Counts every child built, request children and theirs alike (pino's children inherit this method).
  capture.logger.child = function (this: typeof capture.logger, ...args) {
    children.push(1)
    return child.apply(this, args)
  }
  app.get('/quiet', async () => 'ok')
  app.get('/debug', async (request) => {
    request.log.debug('a debug line')
    return 'ok'
  })
  app.get('/info', async (request) => {
    request.log.info({ step: 1 }, 'first')
    request.log.child({ part: 'inner' }).warn('second')
    return request.log.level
  })
  app.get('/louder', async (request) => {
    request.log.level = 'debug'
    request.log.debug('now heard')
    return request.log.level
  })
  return { app, ...capture, children }
}

const parsed = (lines: string[]) => lines.map((line) => JSON.parse(line) as Record<string, unknown>)

describe('the lazy request logger', () => {
  it('builds no child for a request that logs nothing, or only below the level', async () => {
    const { app, lines, children } = await appLoggingAt('info')
    await app.inject('/quiet')
    await app.inject('/debug')
    expect(children).toHaveLength(0)
    expect(lines).toHaveLength(0)
  })

  it('writes the lines pino’s own child would, each bound to its request id', async () => {
    const { app, lines } = await appLoggingAt('info')
    const response = await app.inject('/info')
    expect(response.body).toBe('info')
    const [first, second] = parsed(lines)
    expect(first).toMatchObject({ level: 30, reqId: 'req-1', step: 1, msg: 'first' })
    expect(second).toMatchObject({ level: 40, reqId: 'req-1', part: 'inner', msg: 'second' })
    expect(lines).toHaveLength(2)
  })

  it('takes a level of its own for its request only', async () => {
    const { app, lines } = await appLoggingAt('info')
    expect((await app.inject('/louder')).body).toBe('debug')
    await app.inject('/debug')
    expect(parsed(lines)).toEqual([expect.objectContaining({ level: 20, msg: 'now heard' })])
  })

  it('logs Fastify’s own request lines at info', async () => {
    const capture = captureLogs('info')
    const app = Fastify({ loggerInstance: capture.logger, childLoggerFactory: lazyRequestLogger })
    app.get('/quiet', async () => 'ok')
    await app.inject('/quiet')
    expect(parsed(capture.lines).map(({ msg, reqId }) => [msg, reqId])).toEqual([
      ['incoming request', 'req-1'],
      ['request completed', 'req-1'],
    ])
  })

  it('is used unless every request logs two lines (then Fastify’s own factory is cheaper)', () => {
    for (const level of ['trace', 'debug', 'info']) {
      expect(requestLoggerFactory(level, true)).toBeUndefined()
      expect(requestLoggerFactory(level, false)).toBe(lazyRequestLogger)
    }
    for (const level of ['warn', 'error', 'fatal', 'silent']) {
      expect(requestLoggerFactory(level, true)).toBe(lazyRequestLogger)
      expect(requestLoggerFactory(level, false)).toBe(lazyRequestLogger)
    }
  })
})
