// Sending a stored transaction once every lower nonce of its key is with the node. A lower nonce this process is about
// to send is waited for; one held elsewhere (another request, another instance, a filler) is sent from the outbox,
// where every transaction is stored before its first broadcast; one not signed yet keeps the transaction back, and
// when the wait runs out it is left, unsent, to the monitor, which sends its key's nonces in order. The send whose turn
// it is takes the consecutive nonces waiting behind it along, in one batch request (nodes take a batch in order).
import type { Hex } from 'viem'
import { claimForBroadcast } from '../outbox/monitor-queries.ts'
import { openTransactionsBetween } from '../outbox/relay-transactions.ts'
import type { Slot } from '../outbox/slot.ts'
import { keyAt, type RelayContext } from '../relay-context.ts'
import type { QueuedSend, SendLine } from '../send-line.ts'
import type { Sendable, SendOutcome } from '../send-outcome.ts'
import { sendSigned, sendSignedMany } from './send-signed.ts'

/** A lower nonce this process is about to send is signed and stored within milliseconds, unless its key hangs. */
const WAIT_FOR_OWN_MS = 1_000
/** A gap held elsewhere is asked about again no sooner than this: each try costs an RPC call and a query. */
const MIN_GAP_RETRY_MS = 100

export interface InOrder {
  /** When to give up waiting for a lower nonce (Date.now() scale); the transaction then stays unsent. */
  until: number
  /** Every hash of ours at the transaction's nonce (see ToSend). */
  ownAtNonce?: readonly Hex[]
}

export async function sendInOrder(
  context: RelayContext,
  slot: Slot,
  tx: Sendable,
  options: InOrder,
): Promise<SendOutcome> {
  const { line } = keyAt(context, slot)
  const send: QueuedSend = { tx, ownAtNonce: options.ownAtNonce, state: 'waiting' }
  line.enqueue(send)
  try {
    for (let attempt = 0; ; attempt++) {
      while (send.state !== 'done') {
        const turn = await awaitTurn(context, slot, line, send, options.until)
        // Taken along by a lower nonce's batch since awaitTurn returned: its answer comes with that batch's.
        if (send.state !== 'waiting') continue
        if (!turn)
          return { kind: 'unclear', reason: `not sent: a lower nonce than ${tx.nonce} is not with the node yet` }
        const run = line.takeRun(send)
        line.finish(run, await sendSignedMany(context, slot, run))
      }
      const outcome = send.outcome!
      if (outcome.kind !== 'gap' || attempt > 0) return outcome
      // The node lacks a lower nonce after all (it restarted, or dropped it): ask it again, fill, send once more.
      send.state = 'waiting'
      send.outcome = undefined
      line.next = undefined
    }
  } finally {
    line.dequeue(send)
    line.settle(tx.nonce)
  }
}

/**
 * True once every nonce below the send's is with the node, or once another send took it along in its batch (then it
 * is no longer waiting); false when `until` passed first. A gap held elsewhere is tried once however short the wait
 * (the monitor passes `until` = now).
 */
async function awaitTurn(
  context: RelayContext,
  slot: Slot,
  line: SendLine,
  send: QueuedSend,
  until: number,
): Promise<boolean> {
  const { nonce } = send.tx
  // Every await below may see another send take this one along in its batch: the loop's top then waits for that.
  for (;;) {
    if (send.state === 'done') return true
    if (send.state === 'sending') {
      // In the batch of a lower nonce: its answer comes with that batch's.
      await line.changed(WAIT_FOR_OWN_MS)
      continue
    }
    if (line.next !== undefined && line.next >= nonce) return true
    if (line.next !== undefined && line.comingBetween(line.next, nonce)) {
      // A request of this process sends the lower nonce in a moment (perhaps with this one): wait for it.
      const left = until - Date.now()
      if (left <= 0) return false
      await line.changed(Math.min(WAIT_FOR_OWN_MS, left))
      continue
    }
    // Asks the node for its next nonce, and sends what the outbox holds below this one.
    if ((await fillGap(context, slot, line, nonce)) || send.state !== 'waiting') continue
    const left = until - Date.now()
    if (left <= 0) return false
    await line.changed(Math.min(Math.max(context.pollingIntervalMs, MIN_GAP_RETRY_MS), left))
  }
}

/** Sends the stored transactions the node lacks below `below`, in order; one filling at a time per key. */
async function fillGap(context: RelayContext, slot: Slot, line: SendLine, below: number): Promise<boolean> {
  line.filling ??= fill(context, slot, line, below).finally(() => {
    line.filling = undefined
  })
  await line.filling
  return line.next !== undefined && line.next >= below
}

async function fill(context: RelayContext, slot: Slot, line: SendLine, below: number): Promise<void> {
  const nodeNext = await pendingCount(context, slot)
  if (nodeNext === undefined) return
  line.learned(nodeNext)
  if (nodeNext >= below) return
  const stored = await openTransactionsBetween(context.db, slot, nodeNext, below)
  for (let nonce = nodeNext; nonce < below; nonce++) {
    const tx = stored.get(nonce)
    // Not signed yet, or its own request of this process sends it in a moment.
    if (!tx || line.isComing(nonce)) return
    // A transaction only its request has sent so far is claimed first, so that request no longer withdraws it.
    if (tx.status === 'signed' && !(await claimForBroadcast(context.db, tx.txHash))) return
    const outcome = await sendSigned(context, slot, { tx: { raw: tx.raw, hash: tx.txHash, nonce } })
    if (outcome.kind !== 'sent') {
      context.log.warn(
        { relayer: slot.relayer, nonce, txHash: tx.txHash, outcome: outcome.kind, reason: reasonOf(outcome) },
        'could not fill a nonce gap on the node: later nonces wait',
      )
      return
    }
    context.log.info({ relayer: slot.relayer, nonce, txHash: tx.txHash }, 'filled a nonce gap on the node')
    line.delivered(nonce)
  }
}

/** The node's next nonce for the key, counting its pool; undefined when it cannot be asked. */
async function pendingCount(context: RelayContext, slot: Slot): Promise<number | undefined> {
  return context.chain.client.getTransactionCount({ address: slot.relayer, blockTag: 'pending' }).catch(() => undefined)
}

function reasonOf(outcome: SendOutcome): string | undefined {
  return 'reason' in outcome ? outcome.reason : undefined
}
