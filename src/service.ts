// Starts the whole service from a config: database, chain (embedded anvil unless RPC_URL is set), HTTP app.
// Used by src/server.ts and by the acceptance tests, which drive a real listening server.
import { mkdir } from 'node:fs/promises'
import { resolve } from 'node:path'
import type { FastifyBaseLogger } from 'fastify'
import pino from 'pino'
import { getAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { buildApp } from './api/app.ts'
import type { AppInstance } from './api/app-types.ts'
import { createChainClient } from './chain/chain-client.ts'
import type { ChainContext } from './chain/chain-context.ts'
import { type EmbeddedChain, startEmbeddedChain } from './chain/embedded-chain.ts'
import type { Config, Pkcs11Config } from './config.ts'
import { type DatabaseHandle, openDatabase, pgliteDirectory } from './db/database.ts'
import { migrateDatabase } from './db/migrate.ts'
import { templateForNewPgliteDirectory } from './db/pglite-template.ts'
import { loadOrCreateDevJwtSecret } from './embedded/dev-jwt-secret.ts'
import { loggerOptions } from './logging.ts'
import { openPkcs11Relayers } from './relayer/signers/pkcs11-relayers.ts'
import { SignerHealth } from './relayer/signers/signer-health.ts'

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
  if (embedded) await mkdir(dataDir, { recursive: true })

  // The database and the chain start independently; doing both at once halves a cold start.
  const [databaseResult, chainResult] = await Promise.allSettled([
    openMigratedDatabase(config, dataDir),
    connectChain(config, dataDir, logger),
  ])
  if (databaseResult.status === 'rejected' || chainResult.status === 'rejected') {
    if (databaseResult.status === 'fulfilled') await databaseResult.value.close()
    if (chainResult.status === 'fulfilled') {
      await chainResult.value.embedded?.stop()
      chainResult.value.chain.closeSigners?.()
    }
    throw databaseResult.status === 'rejected' ? databaseResult.reason : (chainResult as PromiseRejectedResult).reason
  }
  const database = databaseResult.value
  const { chain, embedded: embeddedChain } = chainResult.value

  try {
    const jwtSecret = config.jwt.secret ?? (await loadOrCreateDevJwtSecret(dataDir))
    const effectiveConfig: Config = { ...config, jwt: { ...config.jwt, secret: jwtSecret } }
    const app = await buildApp({ config: effectiveConfig, database, chain, logger })
    const address = await app.listen({ host: config.host, port: config.port })
    const url = config.port === 0 ? address : `http://${displayHost(config.host)}:${config.port}`
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
          await embeddedChain?.stop()
          chain.closeSigners?.()
          await database.close()
        })()
        return stopping
      },
    }
  } catch (error) {
    await embeddedChain?.stop()
    chain.closeSigners?.()
    await database.close()
    throw error
  }
}

async function openMigratedDatabase(config: Config, dataDir: string): Promise<DatabaseHandle> {
  const pgliteDir = pgliteDirectory(dataDir)
  const pgliteTemplate = config.database.url === undefined ? await templateForNewPgliteDirectory(pgliteDir) : undefined
  const database = await openDatabase({ url: config.database.url, pgliteDir, pgliteTemplate })
  try {
    await migrateDatabase(database)
    return database
  } catch (error) {
    await database.close()
    throw error
  }
}

async function connectChain(
  config: Config,
  dataDir: string,
  logger: FastifyBaseLogger,
): Promise<{ chain: ChainContext; embedded: EmbeddedChain | undefined }> {
  const { chain: settings } = config
  if (settings.rpcUrls.length === 0) {
    const anvilLogger = logger.child({ component: 'anvil' })
    const embedded = await startEmbeddedChain({ dataDir, log: (line) => anvilLogger.debug(line) })
    const chain: ChainContext = {
      client: createChainClient({
        rpcUrls: [embedded.rpcUrl],
        chainId: embedded.chainId,
        pollingIntervalMs: settings.pollingIntervalMs,
      }),
      chainId: embedded.chainId,
      contractAddress: embedded.contractAddress,
      relayers: embedded.relayerPrivateKeys.map((key) => privateKeyToAccount(key)),
      // The embedded chain listens on loopback only, so its URL is as public as this development service.
      publicRpcUrl: settings.publicRpcUrl ?? embedded.rpcUrl,
      explorerTxUrl: settings.explorerTxUrl ?? null,
    }
    return { chain, embedded }
  }

  const probe = createChainClient({ rpcUrls: settings.rpcUrls, chainId: 1, pollingIntervalMs: 1000 })
  const chainId = await probe.getChainId()
  if (settings.chainId !== undefined && settings.chainId !== chainId) {
    throw new Error(`CHAIN_ID is ${settings.chainId} but the RPC endpoint serves chain ${chainId}`)
  }
  const contractAddress = getAddress(settings.contractAddress!)
  const client = createChainClient({
    rpcUrls: settings.rpcUrls,
    chainId,
    pollingIntervalMs: settings.pollingIntervalMs,
  })
  const code = await client.getCode({ address: contractAddress })
  if (code === undefined || code === '0x') {
    throw new Error(`CONTRACT_ADDRESS ${contractAddress} has no contract code on chain ${chainId}`)
  }
  const signers = settings.pkcs11
    ? await tokenSigners(settings.pkcs11, logger)
    : { relayers: settings.relayerPrivateKeys.map((key) => privateKeyToAccount(key)) }
  return {
    chain: {
      client,
      chainId,
      contractAddress,
      ...signers,
      publicRpcUrl: settings.publicRpcUrl ?? null,
      explorerTxUrl: settings.explorerTxUrl ?? null,
    },
    embedded: undefined,
  }
}

/** The relayer accounts on the PKCS#11 token, with their health; a configuration problem throws ConfigError. */
async function tokenSigners(
  settings: Pkcs11Config,
  logger: FastifyBaseLogger,
): Promise<Pick<ChainContext, 'relayers' | 'signerHealth' | 'closeSigners'>> {
  const log = logger.child({ component: 'pkcs11' })
  let health: SignerHealth | undefined
  const opened = await openPkcs11Relayers(settings, (relayer, up, reason) =>
    health?.report(relayer.address, relayer.keyLabel, up, reason),
  )
  const relayers = opened.map((relayer) => relayer.account)
  health = new SignerHealth(
    relayers.map((account) => account.address.toLowerCase()),
    log,
  )
  log.info({ relayers: relayers.map((account) => account.address) }, 'relayer keys opened on the PKCS#11 token')
  return {
    relayers,
    signerHealth: health,
    closeSigners: () => {
      for (const relayer of opened) relayer.key.close()
    },
  }
}

function displayHost(host: string): string {
  return host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host
}
