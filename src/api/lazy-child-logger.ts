// Fastify gives every request a child logger bound to its id. pino builds a child by copying the parent and
// serializing its bindings, a cost every request paid although most never log a line (a cached verification among
// them). This factory hands out a stand-in that builds the real child on the first line a request logs at an enabled
// level; the lines themselves are the child's, byte for byte. It saves the child unless Fastify logs two lines for
// every request (REQUEST_LOG=all at `info` or below), which build it anyway: there the app keeps Fastify's own factory.
import type { FastifyBaseLogger, FastifyServerOptions } from 'fastify'
import { type Bindings, type ChildLoggerOptions, type Level, type Logger, levels } from 'pino'

type LogArguments = Parameters<FastifyBaseLogger['info']>

class LazyRequestLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: Logger,
    private readonly bindings: Bindings,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  fatal(...args: LogArguments): void {
    this.#write('fatal', args)
  }
  error(...args: LogArguments): void {
    this.#write('error', args)
  }
  warn(...args: LogArguments): void {
    this.#write('warn', args)
  }
  info(...args: LogArguments): void {
    this.#write('info', args)
  }
  debug(...args: LogArguments): void {
    this.#write('debug', args)
  }
  trace(...args: LogArguments): void {
    this.#write('trace', args)
  }
  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  #write(level: Level, args: LogArguments): void {
    // Until its level is set, the child logs what its parent logs.
    if (this.#child === undefined && !this.parent.isLevelEnabled(level)) return
    this.#logger()[level](...args)
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings)
    return this.#child
  }
}

type ChildLoggerFactory = NonNullable<FastifyServerOptions['childLoggerFactory']>

/**
 * The factory for an app logging at `level`, with Fastify's two lines for every request or not (REQUEST_LOG): the lazy
 * one unless both lines are written. Then every request's child is built for them anyway, and a factory of the app's
 * own would only add its cost: the stand-in, and Fastify's check of every child a custom factory returns.
 */
export function requestLoggerFactory(level: string, everyRequestLogged: boolean): ChildLoggerFactory | undefined {
  const value = level === 'silent' ? Number.POSITIVE_INFINITY : levels.values[level]
  const linesForEveryRequest = everyRequestLogged && value !== undefined && value <= levels.values.info!
  return linesForEveryRequest ? undefined : lazyRequestLogger
}

/** Fastify's `childLoggerFactory`: a request child made when first used. The app's loggers are pino's. */
export const lazyRequestLogger: ChildLoggerFactory = (logger, bindings, options) =>
  // A route's own log level or serializers make an eager child: none of the app's routes sets either.
  Object.keys(options).length > 0
    ? logger.child(bindings, options)
    : (new LazyRequestLogger(logger as unknown as Logger, bindings) as unknown as FastifyBaseLogger)
