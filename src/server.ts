// The process entry point: configuration, start, and graceful shutdown on SIGINT/SIGTERM.
import { ConfigError } from './config/env-fields.ts'
import { loadConfigFromProcess } from './config/load-config.ts'
import { createOwnerOnlyFiles } from './owner-only-files.ts'
import { startService } from './service.ts'

async function main(): Promise<void> {
  createOwnerOnlyFiles()
  let config: ReturnType<typeof loadConfigFromProcess>
  try {
    config = loadConfigFromProcess()
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message)
      process.exit(78) // EX_CONFIG
    }
    throw error
  }
  const service = await startService(config).catch((error: unknown) => {
    // Some configuration shows itself wrong only on use: a token refusing the PIN, a key label it does not hold.
    if (error instanceof ConfigError) {
      console.error(error.message)
      process.exit(78)
    }
    throw error
  })
  const log = service.app.log

  let signals = 0
  const shutdown = (signal: NodeJS.Signals) => {
    signals += 1
    if (signals > 1) {
      log.warn({ signal }, 'second signal: exiting at once')
      process.exit(1)
    }
    log.info({ signal }, 'shutting down: finishing in-flight requests')
    const deadline = setTimeout(() => {
      log.error('shutdown took too long: exiting')
      process.exit(1)
    }, config.shutdownTimeoutMs)
    deadline.unref()
    service.stop().then(
      () => {
        log.info('stopped')
        process.exit(0)
      },
      (error: unknown) => {
        log.error({ err: error }, 'shutdown failed')
        process.exit(1)
      },
    )
  }
  process.on('SIGINT', shutdown)
  process.on('SIGTERM', shutdown)
}

main().catch((error: unknown) => {
  console.error('The service could not start:', error instanceof Error ? error.message : error)
  process.exit(1)
})
