// The relayer's nonce row against the chain: created from the chain's count on first use, brought in line with it at
// start and whenever the node disagrees.
import type { LocalAccount } from 'viem/accounts'
import { ensureNonceRow, resyncNonce } from '../outbox/nonces.ts'
import type { Slot } from '../outbox/slot.ts'
import { keyAt, type RelayContext } from '../relay-context.ts'
import { signFiller } from '../signing.ts'

/** Creates the nonce row once per process (a resync counts); concurrent callers share the one chain call. */
export function prepareNonceRow(context: RelayContext, slot: Slot, account: LocalAccount): Promise<void> {
  const key = keyAt(context, slot)
  if (!key.nonceRow) {
    const ready = context.chain.client
      .getTransactionCount({ address: account.address, blockTag: 'pending' })
      .then((count) => ensureNonceRow(context.db, slot, count))
    ready.catch(() => {
      if (key.nonceRow === ready) key.nonceRow = undefined
    })
    key.nonceRow = ready
  }
  return key.nonceRow
}

/** Raises the nonce row to the chain when the key was used elsewhere, and fills nonces handed out with no transaction. */
export async function resync(context: RelayContext, slot: Slot, account: LocalAccount): Promise<void> {
  const { client, chainId } = context.chain
  const pending = await client.getTransactionCount({ address: account.address, blockTag: 'pending' })
  const fees = context.fees.last() ?? (await context.fees.current())
  const result = await resyncNonce(context.db, slot, pending, (nonce) => signFiller(account, chainId, nonce, fees))
  if (result.raisedTo !== undefined) {
    context.log.warn(
      { relayer: slot.relayer, nextNonce: result.raisedTo },
      'relayer nonce raised to the chain: the key was used outside this service',
    )
  }
  if (result.filled.length > 0) {
    context.log.warn({ relayer: slot.relayer, nonces: result.filled }, 'nonce gaps filled with self-transfers')
  }
  keyAt(context, slot).nonceRow = Promise.resolve()
}
