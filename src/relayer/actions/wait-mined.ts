// Waiting for an anchor transaction's receipt, as deep as the configured confirmations.
import { setTimeout as sleep } from 'node:timers/promises'
import type { Hex, TransactionReceipt } from 'viem'
import type { RelayContext } from '../relay-context.ts'

/** The receipt once it is `confirmations` deep, or null after `timeoutMs`. */
export async function waitMined(
  context: RelayContext,
  hash: Hex,
  timeoutMs: number,
): Promise<TransactionReceipt | null> {
  const deadline = Date.now() + timeoutMs
  const receipt = await context.watcher.wait(hash, timeoutMs)
  if (!receipt) return null
  const needed = BigInt(context.settings.confirmations - 1)
  if (needed === 0n) return receipt
  while (Date.now() < deadline) {
    const head = await context.chain.client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined)
    if (head !== undefined && head >= receipt.blockNumber + needed) return receipt
    await sleep(context.pollingIntervalMs)
  }
  return null
}
