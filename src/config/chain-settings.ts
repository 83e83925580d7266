// The chain: the nodes, the contract, the relayer keys (in the environment or on a token), and the embedded chain's
// port when no node is given.
import { z } from 'zod'
import { type EnvValues, list, optionalString } from './env-fields.ts'
import { type tokenEnv, tokenSettings } from './token-settings.ts'

const HEX_PRIVATE_KEY = /^0x[0-9a-fA-F]{64}$/
const ADDRESS = /^0x[0-9a-fA-F]{40}$/

export const chainEnv = {
  RPC_URL: list,
  CHAIN_ID: z.coerce.number().int().positive().optional(),
  CONTRACT_ADDRESS: optionalString,
  RELAYER_PRIVATE_KEY: list,
  /** Where the relayer keys live: `local` (RELAYER_PRIVATE_KEY) or `pkcs11` (a hardware token; the PKCS11_* variables). */
  RELAYER_SIGNER: z.enum(['local', 'pkcs11']).default('local'),
  PKCS11_KEY_LABELS: list,
  PUBLIC_RPC_URL: optionalString,
  /**
   * The embedded chain's loopback port (no RPC_URL): stable across starts for tools that talk to it directly; by
   * default the one after PORT (a free one when PORT is 0). Never published: `/api/info` names the read-only /rpc.
   */
  EMBEDDED_CHAIN_PORT: z.coerce.number().int().min(0).max(65_535).optional(),
  EXPLORER_TX_URL: optionalString,
  CHAIN_POLLING_INTERVAL_MS: z.coerce.number().int().positive().optional(),
}

type ChainEnvValues = EnvValues<typeof chainEnv & typeof tokenEnv>

/** `port`: the service's (PORT), beside which the embedded chain listens by default. */
export function chainSettings(e: ChainEnvValues, port: number, problems: string[]) {
  for (const key of e.RELAYER_PRIVATE_KEY) {
    if (!HEX_PRIVATE_KEY.test(key)) problems.push('RELAYER_PRIVATE_KEY: each key must be 0x followed by 64 hex digits')
  }
  if (e.CONTRACT_ADDRESS !== undefined && !ADDRESS.test(e.CONTRACT_ADDRESS)) {
    problems.push('CONTRACT_ADDRESS: must be 0x followed by 40 hex digits')
  }
  if (e.RPC_URL.length > 0 && e.CONTRACT_ADDRESS === undefined) {
    problems.push('CONTRACT_ADDRESS: required when RPC_URL is set (deploy with `npm run deploy`)')
  }
  const localKeys = e.RELAYER_SIGNER === 'local'
  if (localKeys && e.RPC_URL.length > 0 && e.RELAYER_PRIVATE_KEY.length === 0) {
    problems.push('RELAYER_PRIVATE_KEY: required when RPC_URL is set')
  }
  return {
    /** Empty: start the embedded anvil chain under `dataDir`. */
    rpcUrls: e.RPC_URL,
    chainId: e.CHAIN_ID,
    contractAddress: e.CONTRACT_ADDRESS as `0x${string}` | undefined,
    relayerPrivateKeys: e.RELAYER_PRIVATE_KEY as `0x${string}`[],
    /** Set when RELAYER_SIGNER is pkcs11: the relayer keys are on this token and relayerPrivateKeys is empty. */
    pkcs11: localKeys ? undefined : pkcs11Settings(e, problems),
    publicRpcUrl: e.PUBLIC_RPC_URL,
    /** The embedded anvil's port; 0, a free one. */
    embeddedPort: e.EMBEDDED_CHAIN_PORT ?? (port === 0 || port === 65_535 ? 0 : port + 1),
    explorerTxUrl: e.EXPLORER_TX_URL,
    // A local chain answers in milliseconds; a public one mines every few seconds.
    pollingIntervalMs: e.CHAIN_POLLING_INTERVAL_MS ?? (e.RPC_URL.length === 0 ? 20 : 1000),
  }
}

/** The relayer keys' token; each problem names its variable, and none quotes the PIN. */
function pkcs11Settings(e: ChainEnvValues, problems: string[]) {
  const before = problems.length
  if (e.RELAYER_PRIVATE_KEY.length > 0) {
    problems.push(
      'RELAYER_PRIVATE_KEY: must be unset or empty when RELAYER_SIGNER is pkcs11 (the keys are on the token)',
    )
  }
  if (e.RPC_URL.length === 0) {
    problems.push('RPC_URL: required when RELAYER_SIGNER is pkcs11 (the embedded chain funds only its own keys)')
  }
  if (e.PKCS11_KEY_LABELS.length === 0) problems.push('PKCS11_KEY_LABELS: required when RELAYER_SIGNER is pkcs11')
  if (new Set(e.PKCS11_KEY_LABELS).size !== e.PKCS11_KEY_LABELS.length) {
    problems.push('PKCS11_KEY_LABELS: a label is listed twice')
  }
  const token = tokenSettings(e, 'RELAYER_SIGNER', problems)
  if (problems.length > before || !token) return undefined
  return { ...token, keyLabels: e.PKCS11_KEY_LABELS }
}

/** The relayer keys on the token. */
export type Pkcs11Config = NonNullable<ReturnType<typeof pkcs11Settings>>
