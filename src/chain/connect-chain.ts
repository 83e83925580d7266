// The service's chain: the embedded anvil (with its contract) when no RPC_URL is configured, else the configured
// endpoints, checked to serve the configured chain and contract, with the relayer keys from the config or a PKCS#11
// token.
import type { FastifyBaseLogger } from 'fastify'
import { getAddress } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import type { Pkcs11Config } from '../config/chain-settings.ts'
import type { Config } from '../config/load-config.ts'
import { openPkcs11Relayers } from '../pkcs11/pkcs11-relayers.ts'
import { SignerHealth } from '../pkcs11/signer-health.ts'
import { createChainClient } from './chain-client.ts'
import type { ChainContext } from './chain-context.ts'
import { type EmbeddedChain, startEmbeddedChain } from './embedded-chain.ts'

export interface ConnectedChain {
  chain: ChainContext
  /** The anvil this start runs, when no RPC_URL is configured. */
  embedded: EmbeddedChain | undefined
}

export async function connectChain(
  config: Config,
  dataDir: string,
  logger: FastifyBaseLogger,
): Promise<ConnectedChain> {
  const { chain: settings } = config
  if (settings.rpcUrls.length === 0) {
    const anvilLogger = logger.child({ component: 'anvil' })
    const embedded = await startEmbeddedChain({
      dataDir,
      port: settings.embeddedPort,
      log: (line) => anvilLogger.debug(line),
    })
    const chain: ChainContext = {
      client: createChainClient({
        rpcUrls: [embedded.rpcUrl],
        chainId: embedded.chainId,
        pollingIntervalMs: settings.pollingIntervalMs,
      }),
      chainId: embedded.chainId,
      contractAddress: embedded.contractAddress,
      relayers: embedded.relayerPrivateKeys.map((key) => privateKeyToAccount(key)),
      // anvil answers every method, writes and `anvil_*` included: only the service's read-only route is published.
      publicRpcUrl: settings.publicRpcUrl ?? null,
      embeddedRpcUrl: embedded.rpcUrl,
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
