// Where `anchor verify --rpc` reads anchors: the chain itself, through viem, against the contracts something other
// than the PDF vouches for (trusted-contract.ts). Its own module, imported only with --rpc: viem is a third of a
// service-backed verify's start-up once the package is installed (its index loads whole from node_modules).

import { type AnchorRecord, anchorFromReceipt, compositeHashesEqual } from '@docanchor/client'
import {
  type Address,
  createPublicClient,
  type Hash,
  http,
  type PublicClient,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { CliContext } from './cli-context.ts'
import { CliError, EXIT } from './cli-errors.ts'
import { ignoredPinsNote, readPins } from './contract-pins.ts'
import type { ServiceClient } from './service-client.ts'
import { contractFor, type TrustedContracts, trustedContracts, untrustedContract } from './trusted-contract.ts'

/** The anchor of a transaction, null when there is none. */
export type Lookup = (txHash: string) => Promise<AnchorRecord | null>

/** Anchors read from the chain: no trust in the service for them. The ciphertext and the identity attestation, which
 * only the service holds, are asked for separately and used only for the composite hash the chain records. */
function chainLookup(
  client: PublicClient,
  rpcOrigin: string,
  contractOf: (txHash: string) => Address,
  service: ServiceClient,
  takeAttestations: boolean,
): Lookup {
  return async (txHash) => {
    let receipt: Awaited<ReturnType<typeof client.getTransactionReceipt>>
    try {
      receipt = await client.getTransactionReceipt({ hash: txHash as Hash })
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return null
      throw chainUnreachable(rpcOrigin)
    }
    const anchor = anchorFromReceipt(receipt, contractOf(txHash))
    if (!anchor) return null
    const stored = await service.anchor(txHash).catch(() => null)
    const same = stored !== null && compositeHashesEqual(stored.compositeHash, anchor.compositeHash)
    const attested = takeAttestations && same
    return {
      ...anchor,
      encryptedPayload: stored?.encryptedPayload ?? null,
      attestation: attested ? (stored.attestation ?? null) : null,
    }
  }
}

const chainUnreachable = (origin: string) =>
  new CliError(`cannot read the chain at ${origin}`, EXIT.service, 'CHAIN_UNREACHABLE')

/** Transaction hash → the contract the signature's metadata names (undefined when it names none). */
export type Claims = [string, string | undefined][]

/**
 * The lookup for --rpc and the contracts it trusts: --contract, else the configured service's, else the pinned ones,
 * else the default service's; refused when only the PDF names a contract.
 */
export async function chainSource(
  rpc: string,
  contractFlag: string | undefined,
  claims: Claims,
  service: { client: ServiceClient; configured: boolean },
  context: CliContext,
): Promise<{ lookup: Lookup; trusted: TrustedContracts }> {
  const rpcOrigin = new URL(rpc).origin
  const client = createPublicClient({ transport: http(rpc, { retryCount: 1 }) }) as PublicClient
  const rpcChainId = await client.getChainId().catch(() => {
    throw chainUnreachable(rpcOrigin)
  })
  const { pins, ignored } = await readPins(context.config.configDir)
  const note = ignoredPinsNote(context.config.configDir, ignored)
  if (note) context.io.stderr.write(`${note}\n`)
  const found = await trustedContracts({
    rpcChainId,
    contractFlag,
    service: service.client,
    serviceConfigured: service.configured,
    pins,
  })
  if (!found) {
    const named = claims.find(([, contract]) => contract)?.[1]
    throw untrustedContract(named, rpcChainId, undefined, service.client.baseUrl)
  }
  const contracts = new Map<string, Address>()
  for (const [txHash, contract] of claims) {
    const chosen = contractFor(found, contract)
    if (!chosen) throw untrustedContract(contract, rpcChainId, found)
    contracts.set(txHash.toLowerCase(), chosen)
  }
  // What is shown as checked is what is used: with several pins, only the ones the signatures name.
  const trusted = found.source === 'pinned' ? { ...found, contracts: [...new Set(contracts.values())] } : found
  const contractOf = (txHash: string) => contracts.get(txHash.toLowerCase()) ?? found.contracts[0]!
  // Payloads and attestations come from the service whose contract counts (configured or default, as for plain
  // verify); the chain checks the payloads. Under --contract or pins no service vouched for anything: its
  // attestations count only when it is the one configured.
  const takeAttestations = trusted.source === 'service' || service.configured
  return { lookup: chainLookup(client, rpcOrigin, contractOf, service.client, takeAttestations), trusted }
}
