// Sending one stored transaction and saying what became of it. Only a node's own words, checked against the chain, can
// say a transaction will never be mined; a lost answer, a refused connection, a gateway's 429 or 503, or words nobody
// recognised leave it pending, and so does every refusal that follows an attempt whose outcome was unclear.
import { type Hex, parseTransaction } from 'viem'
import type { RawSendResult } from '../../chain/raw-sender.ts'
import { classifyNodeError } from '../node-errors.ts'
import type { Slot } from '../outbox/slot.ts'
import type { RelayContext } from '../relay-context.ts'
import type { SendOutcome, ToSend } from '../send-outcome.ts'

const SENT: SendOutcome = { kind: 'sent' }

/** Sends `tx` once (per RPC URL) and classifies the answer. */
export async function sendSigned(context: RelayContext, slot: Slot, item: ToSend): Promise<SendOutcome> {
  return (await sendSignedMany(context, slot, [item]))[0]!
}

/** Sends several at once, in the order given (one batch request), and classifies each answer. */
export async function sendSignedMany(
  context: RelayContext,
  slot: Slot,
  items: readonly ToSend[],
): Promise<SendOutcome[]> {
  const results = await context.chain.client.sendRaw(items.map((item) => item.tx.raw))
  return Promise.all(items.map((item, i) => classify(context, slot, item, results[i]!)))
}

async function classify(
  context: RelayContext,
  slot: Slot,
  { tx, ownAtNonce = [tx.hash] }: ToSend,
  { answer, unclearBefore }: RawSendResult,
): Promise<SendOutcome> {
  if (answer.kind === 'accepted') return SENT
  if (answer.kind === 'unclear') return { kind: 'unclear', reason: answer.reason }
  const reason = answer.message
  switch (classifyNodeError(reason)) {
    case 'known':
      return SENT
    case 'nonce-too-low':
      return whoseNonce(context, slot, tx.nonce, ownAtNonce, reason)
    case 'nonce-too-high':
      return { kind: 'gap', reason }
    case 'underpriced':
      return { kind: 'underpriced', reason }
    case 'insufficient-funds':
      // A broken signature recovers another sender, who has no funds: only our own balance makes this certain.
      return !unclearBefore && (await cannotPay(context, slot, tx.raw)) ? { kind: 'refused', reason } : unclear(reason)
    case 'invalid':
      return unclearBefore ? unclear(reason) : { kind: 'refused', reason }
    default:
      // Busy, rate limited, or words no entry of the table knows.
      return unclear(reason)
  }
}

function unclear(reason: string): SendOutcome {
  return { kind: 'unclear', reason }
}

/**
 * After "nonce too low": ours when the node holds or mined one of our hashes at that nonce; taken by another when the
 * chain's count is past the nonce and the node, asked in the same batch (one request, one node), knows none of them.
 * A failed read proves nothing.
 */
async function whoseNonce(
  context: RelayContext,
  slot: Slot,
  nonce: number,
  ownAtNonce: readonly Hex[],
  reason: string,
): Promise<SendOutcome> {
  const held = await nonceHolder(context, slot, nonce, ownAtNonce)
  if (held === 'ours') return SENT
  if (held === 'another') return { kind: 'nonce-taken', reason }
  return unclear(reason)
}

/** Who holds `nonce` on chain: one of `ownAtNonce` (mined or in the pool), another transaction, or unknown. */
export async function nonceHolder(
  context: RelayContext,
  slot: Slot,
  nonce: number,
  ownAtNonce: readonly Hex[],
): Promise<'ours' | 'another' | 'unknown'> {
  try {
    const answers = await context.chain.client.requestBatch([
      ...ownAtNonce.map((hash) => ({ method: 'eth_getTransactionReceipt', params: [hash] })),
      ...ownAtNonce.map((hash) => ({ method: 'eth_getTransactionByHash', params: [hash] })),
      { method: 'eth_getTransactionCount', params: [slot.relayer, 'latest'] },
    ])
    const count = Number(answers.at(-1))
    if (answers.slice(0, -1).some((answer) => answer !== null && answer !== undefined)) return 'ours'
    return Number.isSafeInteger(count) && count > nonce ? 'another' : 'unknown'
  } catch {
    return 'unknown'
  }
}

/** Whether the key's balance cannot pay the transaction's gas at its fee (a failed read: we cannot tell). */
async function cannotPay(context: RelayContext, slot: Slot, raw: Hex): Promise<boolean> {
  const tx = parseTransaction(raw)
  const cost = (tx.gas ?? 0n) * (tx.maxFeePerGas ?? tx.gasPrice ?? 0n) + (tx.value ?? 0n)
  const balance = await context.chain.client.getBalance({ address: slot.relayer }).catch(() => undefined)
  return balance !== undefined && balance < cost
}
