// Starts the whole service from a config: database, chain (embedded anvil unless RPC_URL is set), HTTP app.
// Used by src/server.ts and by the acceptance tests, which drive a real listening server.
import { mkdir } from 'node:fs/promises'
import { type AddressInfo, createServer } from 'node:net'
import { join, resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import type { AppInstance } from './api/app-types.ts'
import type { ChainContext } from './chain/chain-context.ts'
import type { ConnectedChain } from './chain/connect-chain.ts'
import type { Config } from './config/load-config.ts'
import { hostInUrl, serviceUrls, TRUST_EVERY_HOP } from './config/server-settings.ts'
import { type DatabaseHandle, pgliteDirectory } from './db/database.ts'
import { openMigratedDatabase } from './db/open-migrated-database.ts'
import { loadOrCreateDevJwtSecret } from './embedded/dev-jwt-secret.ts'
import { loggerOptions } from './logging.ts'
import { ownerOnly, restrictToOwner } from './owner-only-files.ts'

export interface RunningService {
  app: AppInstance
  url: string
  config: Config
  chain: ChainContext
  database: DatabaseHandle
  /** Stops accepting requests, finishes in-flight ones, then stops the chain and closes the database. */
  stop(): Promise<void>
}

export interface StartServiceOptions {
  logger?: FastifyBaseLogger
}

export async function startService(config: Config, options: StartServiceOptions = {}): Promise<RunningService> {
  const logger = options.logger ?? (pino(loggerOptions(config.logLevel)) as FastifyBaseLogger)
  const dataDir = resolve(config.dataDir)
  const embedded = config.database.url === undefined || config.chain.rpcUrls.length === 0
  if (embedded) await mkdir(dataDir, { recursive: true, mode: 0o700 })

  // The database, the chain and the HTTP app's modules load independently, so all three go at once. The database
  // starts first: opening PGlite mostly waits on the disk (a new directory's template copy, its WebAssembly and file
  // bundle), while the chain client's and the app's modules (viem, Fastify, Swagger, the routes: most of this module
  // graph) load on the main thread.
  const databaseOpening = openMigratedDatabase(config.database.url, dataDir)
  const chainConnecting = import('./chain/connect-chain.ts').then(({ connectChain }) =>
    connectChain(config, dataDir, logger),
  )
  const appLoading = import('./api/app.ts')
  const results = await Promise.allSettled([databaseOpening, chainConnecting, appLoading])
  const [databaseResult, chainResult, appModuleResult] = results
  if (
    databaseResult.status === 'rejected' ||
    chainResult.status === 'rejected' ||
    appModuleResult.status === 'rejected'
  ) {
    if (databaseResult.status === 'fulfilled') await databaseResult.value.close()
    if (chainResult.status === 'fulfilled') await stopChain(chainResult.value)
    throw results.find((result) => result.status === 'rejected')?.reason
  }
  // Once the database is open: PGlite unpacks a new directory from its template with the archive's modes (0666),
  // which no umask narrows; what it writes later, the umask does (server.ts). A directory made so, or by an older
  // version, shows it in its own mode or its PG_VERSION's: only then is the whole tree walked.
  const marker = join(pgliteDirectory(dataDir), 'PG_VERSION')
  if (embedded && !(await ownerOnly(dataDir, marker))) await restrictToOwner(dataDir)
  return serve(config, dataDir, logger, databaseResult.value, chainResult.value, appModuleResult.value.buildApp)
}

async function serve(
  config: Config,
  dataDir: string,
  logger: FastifyBaseLogger,
  database: DatabaseHandle,
  connected: ConnectedChain,
  buildApp: typeof import('./api/app.ts').buildApp,
): Promise<RunningService> {
  const { chain } = connected
  try {
    const jwtSecret = config.jwt.secret ?? (await loadOrCreateDevJwtSecret(dataDir))
    // PORT=0: the free port is picked now, so that the URLs that default to the service's own address (every QR
    // code's, CORS's) name it rather than port 0. Another process could take it before the listen below: the start
    // then fails with EADDRINUSE, as for any port.
    const port = config.port === 0 ? await freePort(config.host) : config.port
    const effectiveConfig: Config = {
      ...config,
      port,
      ...serviceUrls(config.host, config.configuredUrls, port),
      jwt: { ...config.jwt, secret: jwtSecret },
    }
    if (config.trustProxy === true) logger.warn(`TRUST_PROXY=true ${TRUST_EVERY_HOP}`)
    const app = await buildApp({ config: effectiveConfig, database, chain, logger })
    await app.listen({ host: config.host, port })
    const url = `http://${hostInUrl(config.host)}:${port}`
    logger.info(
      { url, chainId: chain.chainId, contractAddress: chain.contractAddress, database: database.kind },
      `Document anchoring service ready at ${url}`,
    )
    let stopping: Promise<void> | undefined
    return {
      app,
      url,
      config: effectiveConfig,
      chain,
      database,
      stop: () => {
        stopping ??= (async () => {
          // Refuse new requests from this moment, before Fastify starts closing.
          app.lifecycle.shuttingDown = true
          await app.close()
          await stopChain(connected)
          await database.close()
        })()
        return stopping
      },
    }
  } catch (error) {
    await stopChain(connected)
    await database.close()
    throw error
  }
}

async function stopChain({ chain, embedded }: ConnectedChain): Promise<void> {
  await embedded?.stop()
  chain.closeSigners?.()
}

/** A port free on `host` at this moment: the system's pick for a listen on port 0. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer()
    probe.once('error', reject)
    probe.listen({ host, port: 0 }, () => {
      const { port } = probe.address() as AddressInfo
      probe.close(() => resolve(port))
    })
  })
}
