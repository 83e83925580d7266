// Builds and signs the relayer's transactions; the hash is computed locally so it can be stored before broadcast.
import { type Address, encodeFunctionData, type Hex, keccak256, parseTransaction } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import { documentAnchorsAbi } from '../chain/document-anchors-artifact.ts'
import type { Fees } from './fees.ts'

/** A transaction signed by a relayer key, with the hash stored before it is broadcast. */
export interface SignedTransaction {
  raw: Hex
  hash: Hex
  fees: Fees
}

const TRANSFER_GAS = 21_000n

export function anchorCallData(compositeHash: Hex, previousTxHash: Hex): Hex {
  return encodeFunctionData({ abi: documentAnchorsAbi, functionName: 'anchor', args: [compositeHash, previousTxHash] })
}

export async function signCall(
  account: LocalAccount,
  call: { chainId: number; to: Address; data?: Hex; gas: bigint; nonce: number },
  fees: Fees,
): Promise<SignedTransaction> {
  const raw = await account.signTransaction({
    type: 'eip1559',
    chainId: call.chainId,
    to: call.to,
    data: call.data,
    gas: call.gas,
    nonce: call.nonce,
    value: 0n,
    maxFeePerGas: fees.maxFeePerGas,
    maxPriorityFeePerGas: fees.maxPriorityFeePerGas,
  })
  return { raw, hash: keccak256(raw), fees }
}

/** A zero-value transfer to itself: it only uses up `nonce`, so the transactions after it can be mined. */
export function signFiller(account: LocalAccount, chainId: number, nonce: number, fees: Fees) {
  return signCall(account, { chainId, to: account.address, gas: TRANSFER_GAS, nonce }, fees)
}

/** The same call with other fees: a replacement (same nonce), or under `nonce` when its own was taken. */
export function resign(account: LocalAccount, raw: Hex, fees: Fees, nonce?: number): Promise<SignedTransaction> {
  const tx = parseTransaction(raw)
  if (tx.to == null || tx.nonce === undefined || tx.gas === undefined || tx.chainId === undefined) {
    throw new Error('stored transaction lacks to, nonce, gas or chain id')
  }
  const call = { chainId: tx.chainId, to: tx.to, data: tx.data, gas: tx.gas, nonce: nonce ?? tx.nonce }
  return signCall(account, call, fees)
}
