// Which DocumentAnchors contract counts for `anchor verify --rpc`. Anyone can deploy the contract and anchor what they
// like, so the address named inside a PDF proves nothing: the trust anchor is --contract, else the configured
// service's /api/info, else a contract the user pinned earlier (`anchor pin`), else the /api/info of the default
// service, the one plain `anchor verify` asks when none is configured (one rule for which service, with or without
// --rpc; a pin is the user's own choice, so it ranks above a default they never named).

import type { Address } from 'viem'
import { CliError, EXIT } from './cli-errors.ts'
import type { ContractPin } from './contract-pins.ts'
import type { ServiceClient } from './service-client.ts'

export type ContractSource = '--contract' | 'service' | 'pinned'

export interface TrustedContracts {
  chainId: number
  source: ContractSource
  /** Lower-case; one, except for several pins on the chain. */
  contracts: Address[]
}

export interface TrustSources {
  /** The chain id the RPC endpoint reports. */
  rpcChainId: number
  contractFlag: string | undefined
  /** The service plain `verify` would ask: the configured one (--service, ANCHOR_URL, a stored login), else the default. */
  service: ServiceClient
  serviceConfigured: boolean
  pins: readonly ContractPin[]
}

/** The contracts whose events count, or undefined when nothing vouches for any. */
export async function trustedContracts(sources: TrustSources): Promise<TrustedContracts | undefined> {
  const { rpcChainId } = sources
  if (sources.contractFlag) {
    return { chainId: rpcChainId, source: '--contract', contracts: [sources.contractFlag.toLowerCase() as Address] }
  }
  const pinned = sources.pins.filter((pin) => pin.chainId === rpcChainId).map((pin) => pin.contract)
  const fromPins = { chainId: rpcChainId, source: 'pinned', contracts: pinned } as const
  if (!sources.serviceConfigured && pinned.length > 0) return fromPins
  try {
    const info = await sources.service.info()
    if (info.chainId !== rpcChainId) {
      throw new CliError(
        `the service's contract ${info.contractAddress} is on chain ${info.chainId}, but --rpc serves chain ${rpcChainId}: give --contract <address>`,
        EXIT.input,
        'CHAIN_MISMATCH',
      )
    }
    return { chainId: rpcChainId, source: 'service', contracts: [info.contractAddress.toLowerCase() as Address] }
  } catch (error) {
    if (!(error instanceof CliError) || error.code !== 'SERVICE_UNREACHABLE') throw error
    // With the configured service gone, pinned contracts still anchor the check: that is what pins are for. The
    // default service not answering leaves nothing to vouch for a contract: the caller refuses, saying so.
    if (pinned.length > 0) return fromPins
    if (sources.serviceConfigured) throw error
    return undefined
  }
}

/** The trusted contract that checks a signature whose metadata names `named` (or none), else undefined. */
export function contractFor(trusted: TrustedContracts, named: string | undefined): Address | undefined {
  if (trusted.source !== 'pinned') return trusted.contracts[0]
  if (named === undefined) return trusted.contracts.length === 1 ? trusted.contracts[0] : undefined
  return trusted.contracts.find((contract) => contract === named.toLowerCase())
}

/** The refusal when the PDF's word is all there is for a contract. */
export function untrustedContract(
  named: string | undefined,
  chainId: number,
  trusted: TrustedContracts | undefined,
  /** The default service's URL, when it was asked and did not answer. */
  unansweredService?: string,
) {
  const what = named ? `the PDF names contract ${named} (chain ${chainId})` : 'nothing names the contract to check'
  const why = trusted
    ? `, which is not among your pinned contracts on chain ${chainId} (${trusted.contracts.join(', ')})`
    : `, and a contract named only in the PDF proves nothing (anyone can deploy one)${unansweredService ? `; the default service at ${unansweredService}, which would name one, did not answer` : ''}`
  return new CliError(
    `${what}${why}: give --contract <address> of the DocumentAnchors deployment you trust, configure the service ` +
      '(--service, ANCHOR_URL or `anchor login`), or pin the contract with `anchor pin <address> --chain-id <id>`',
    EXIT.input,
    'CONTRACT_UNTRUSTED',
  )
}
