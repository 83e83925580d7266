// Deploys the DocumentAnchors contract and manages its relayers; the owner is the wallet client's account.
import type { Account, Address, Chain, Hash, PublicClient, Transport, WalletClient } from 'viem'
import { documentAnchorsAbi, documentAnchorsBytecode } from './document-anchors-artifact.ts'

/** A wallet client with an account: every call here signs. */
export type SigningWalletClient = WalletClient<Transport, Chain | undefined, Account>

export interface DeployDocumentAnchorsOptions {
  /** Addresses allowed to call `anchor`, authorized one after another once the contract is mined. */
  relayers?: readonly Address[]
}

export interface RelayerParameters {
  contract: Address
  relayer: Address
}

export async function deployDocumentAnchors(
  walletClient: SigningWalletClient,
  publicClient: PublicClient,
  { relayers = [] }: DeployDocumentAnchorsOptions = {},
): Promise<Address> {
  const hash = await walletClient.deployContract({
    abi: documentAnchorsAbi,
    bytecode: documentAnchorsBytecode,
    account: walletClient.account,
    // Without a chain on the client, viem signs for the chain id the node reports.
    chain: walletClient.chain ?? null,
  })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success' || !receipt.contractAddress) {
    throw new Error(`deploying DocumentAnchors failed in transaction ${hash}`)
  }
  // One at a time: each waits for its receipt, so the account's nonces never race.
  for (const relayer of relayers)
    await addRelayer(walletClient, publicClient, { contract: receipt.contractAddress, relayer })
  return receipt.contractAddress
}

/** Authorizes `relayer` to anchor; only the owner may. Resolves with the mined transaction's hash. */
export function addRelayer(
  walletClient: SigningWalletClient,
  publicClient: PublicClient,
  { contract, relayer }: RelayerParameters,
): Promise<Hash> {
  return writeAsOwner(walletClient, publicClient, contract, 'addRelayer', relayer)
}

/** Revokes `relayer`; only the owner may. Resolves with the mined transaction's hash. */
export function removeRelayer(
  walletClient: SigningWalletClient,
  publicClient: PublicClient,
  { contract, relayer }: RelayerParameters,
): Promise<Hash> {
  return writeAsOwner(walletClient, publicClient, contract, 'removeRelayer', relayer)
}

export function isRelayer(publicClient: PublicClient, { contract, relayer }: RelayerParameters): Promise<boolean> {
  return publicClient.readContract({
    address: contract,
    abi: documentAnchorsAbi,
    functionName: 'isRelayer',
    args: [relayer],
  })
}

async function writeAsOwner(
  walletClient: SigningWalletClient,
  publicClient: PublicClient,
  contract: Address,
  functionName: 'addRelayer' | 'removeRelayer',
  relayer: Address,
): Promise<Hash> {
  // Simulating first turns a revert (NotOwner, ZeroAddress) into a decoded error instead of a mined failed transaction.
  const { request } = await publicClient.simulateContract({
    address: contract,
    abi: documentAnchorsAbi,
    functionName,
    args: [relayer],
    account: walletClient.account,
  })
  const hash = await walletClient.writeContract({ ...request, chain: walletClient.chain ?? null })
  const receipt = await publicClient.waitForTransactionReceipt({ hash })
  if (receipt.status !== 'success') throw new Error(`${functionName}(${relayer}) reverted in transaction ${hash}`)
  return hash
}
