// The relay path of one request: check the previous anchor, reserve the anchor and its nonce, sign and store its
// transaction, broadcast it, and wait for the receipt within the window. The monitor (monitor.ts) finishes whatever
// this leaves pending. Composite and previous hashes arrive lower-case (the route's schema makes them so).
import { setTimeout as sleep } from 'node:timers/promises'
import type { IdentityAttestation } from '@docanchor/client'
import { anchorFromReceipt, ZERO_TX_HASH } from '@docanchor/client'
import { type Hex, type TransactionReceipt, TransactionReceiptNotFoundError } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import { ChainUnavailableError, orChainUnavailable } from '../chain/chain-errors.ts'
import { DatabaseForgotError } from '../db/database-unavailable.ts'
import { quotaPeriod, UNSIGNED_PREFIX } from '../db/schema.ts'
import { broadcast } from './actions/broadcast.ts'
import { recordReceipt } from './actions/record-receipt.ts'
import { reserve } from './actions/reserve.ts'
import { prepareNonceRow } from './actions/resync.ts'
import { signAndAttach } from './actions/sign-and-attach.ts'
import { waitMined } from './actions/wait-mined.ts'
import { AnchorConflictError, PreviousNotFoundError, QuotaExceededError, UserGoneError } from './errors.ts'
import type { Fees } from './fees.ts'
import { type AnchorRow, findAnchorByCompositeHash, findAnchorById, isConfirmedAnchor } from './outbox/anchors.ts'
import type { Slot } from './outbox/slot.ts'
import { keyAt, type RelayContext, slotOf } from './relay-context.ts'

export interface RelayRequest {
  userId: string
  /** Lower-case. */
  compositeHash: Hex
  /** Lower-case. */
  previousTxHash: Hex
  encryptedPayload: string
  /** The service's attestation of the relaying account, when the client sent the payload's salt. */
  attestation?: IdentityAttestation | null
}

export interface RelayResult {
  anchor: AnchorRow
  /** False when the request repeated an existing anchor. */
  created: boolean
}

export async function relay(context: RelayContext, request: RelayRequest): Promise<RelayResult> {
  // No lookup first: the reservation itself fails on a taken composite hash, and only then is the anchor read.
  await checkPrevious(context, request.previousTxHash)
  const relayer = context.pool.acquire()
  if (!relayer) {
    return repeatOr(context, request, new ChainUnavailableError('No relayer can take work now; try again later'))
  }
  try {
    return await relayWith(context, request, slotOf(context, relayer.address), relayer.account)
  } finally {
    context.pool.release(relayer)
  }
}

async function relayWith(
  context: RelayContext,
  request: RelayRequest,
  slot: Slot,
  account: LocalAccount,
): Promise<RelayResult> {
  const until = Date.now() + context.settings.waitMs
  let fees: Fees
  try {
    if (context.contract.missing) {
      throw new ChainUnavailableError('The blockchain node does not serve the anchoring contract now; try again later')
    }
    // Nothing is reserved before the relayer knows what its keys did that the database may have forgotten.
    await orChainUnavailable(() => context.reconciliation.settled())
    fees = await orChainUnavailable(() => context.fees.current())
    await orChainUnavailable(() => prepareNonceRow(context, slot, account))
  } catch (error) {
    // A client repeating a request to learn its anchor's state gets it even while no new work can be taken.
    return repeatOr(context, request, error)
  }
  const { period, resetsAt } = quotaPeriod()
  const { userId, compositeHash, previousTxHash, encryptedPayload } = request
  const attestation = request.attestation ?? null
  const reserved = await reserve(context, slot, {
    compositeHash,
    previousTxHash,
    encryptedPayload,
    userId,
    period,
    attestation,
  })
  if (reserved.kind === 'exists') {
    const raced = await findAnchorByCompositeHash(context.db, compositeHash)
    if (!raced) throw forgotten(context)
    return repeat(context, request, raced)
  }
  if (reserved.kind === 'quota_exceeded') {
    throw new QuotaExceededError(reserved.limit, Math.max(reserved.used, reserved.limit), resetsAt)
  }
  if (reserved.kind === 'no_user') throw new UserGoneError()
  if (context.reconciliation.due) {
    // The database failed over while this relay reserved: its nonce may be one the chain consumed. The monitor signs
    // the reservation once reconciled; the client's repeat finds it.
    throw new DatabaseForgotError('the database failed over while the relay reserved its anchor')
  }

  const { line } = keyAt(context, slot)
  line.expect(reserved.nonce)
  try {
    const anchor = { anchorId: reserved.anchorId, nonce: reserved.nonce, compositeHash, previousTxHash }
    const tx = await signAndAttach(context, slot, account, anchor, fees).catch((error: unknown) => {
      if (error instanceof ChainUnavailableError) {
        context.log.warn(
          { relayer: slot.relayer, anchorId: anchor.anchorId },
          'relayer key could not sign: left to the monitor',
        )
      }
      throw error
    })
    // The monitor signed it first (it took the reservation for abandoned): the anchor answers as it stands.
    if (!tx) return current(context, anchor.anchorId)

    const sent = await broadcast(context, { slot, account, anchor: { ...anchor, userId, period }, tx, fees, until })
    if (sent.kind === 'withdrawn') {
      throw new ChainUnavailableError('The blockchain node refused the transaction', { cause: new Error(sent.reason) })
    }
    // Sent, or perhaps with the node (or soon, from the monitor): its receipt is awaited within the window either way.
    const receipt = await waitMined(context, sent.tx.hash, Math.max(0, until - Date.now()))
    const mined = receipt && (await recordReceipt(context, { ...request, id: anchor.anchorId }, receipt))
    if (mined) return { anchor: mined, created: true }
    return current(context, anchor.anchorId)
  } finally {
    line.settle(reserved.nonce)
  }
}

async function repeatOr(context: RelayContext, request: RelayRequest, error: unknown): Promise<RelayResult> {
  const existing = await findAnchorByCompositeHash(context.db, request.compositeHash)
  if (!existing) throw error
  return repeat(context, request, existing)
}

async function current(context: RelayContext, anchorId: string): Promise<RelayResult> {
  const anchor = await findAnchorById(context.db, anchorId)
  if (!anchor) throw forgotten(context)
  return { anchor, created: true }
}

/**
 * The anchor this request reserved (or found) is not in the database any more: it failed over to a standby that had
 * not received it. What the transaction did is on chain: reconcile before anything else, and let the client repeat.
 */
function forgotten(context: RelayContext): DatabaseForgotError {
  context.reconciliation.require('an anchor vanished from the database')
  return new DatabaseForgotError('the database no longer holds the anchor this relay reserved')
}

async function repeat(context: RelayContext, request: RelayRequest, found: AnchorRow): Promise<RelayResult> {
  // Found on chain after the database forgot it: its ciphertext and owner are unknown, so nothing can be compared, and
  // the composite hash is anchored already; the repeat gets that anchor rather than a second one.
  if (found.reconciled) return { anchor: found, created: false }
  let existing = found
  const same =
    existing.userId === request.userId &&
    existing.previousTxHash === request.previousTxHash &&
    existing.encryptedPayload === request.encryptedPayload &&
    sameAttestation(existing.attestation, request.attestation ?? null)
  if (!same) throw new AnchorConflictError()
  const { waitMs } = context.settings
  if (existing.txHash.startsWith(UNSIGNED_PREFIX)) {
    // Reserved by a request that is signing it this very moment (or died doing so: the monitor finishes it).
    const deadline = Date.now() + waitMs
    while (existing.txHash.startsWith(UNSIGNED_PREFIX) && Date.now() < deadline) {
      await sleep(context.pollingIntervalMs)
      existing = (await findAnchorById(context.db, existing.id)) ?? existing
    }
    if (existing.txHash.startsWith(UNSIGNED_PREFIX)) throw new ChainUnavailableError()
  }
  if (existing.status === 'pending') {
    // Repeating the request is how a client waits: wait here as a first request would.
    const receipt = await waitMined(context, existing.txHash as Hex, waitMs).catch(() => null)
    if (receipt && receipt.transactionHash.toLowerCase() === existing.txHash) {
      return { anchor: (await recordReceipt(context, existing, receipt)) ?? existing, created: false }
    }
  }
  return { anchor: existing, created: false }
}

/** The previous anchor is the zero hash, a confirmed anchor of ours, or a transaction the contract anchored. */
async function checkPrevious(context: RelayContext, previousTxHash: Hex): Promise<void> {
  if (previousTxHash === ZERO_TX_HASH) return
  if (await isConfirmedAnchor(context.db, previousTxHash)) return
  let receipt: TransactionReceipt
  try {
    receipt = await context.chain.client.getTransactionReceipt({ hash: previousTxHash })
  } catch (error) {
    if (error instanceof TransactionReceiptNotFoundError) throw new PreviousNotFoundError()
    throw new ChainUnavailableError(undefined, { cause: error })
  }
  if (!anchorFromReceipt(receipt, context.chain.contractAddress)) throw new PreviousNotFoundError()
}

/**
 * Whether a repeated relay agrees with the anchor's attestation. A repeat without salt states nothing and gets the
 * anchor as it is; one with a salt must commit to what was stored: another salt, or a salt for an anchor relayed
 * without one, would change what the service attests after the fact.
 */
function sameAttestation(stored: IdentityAttestation | null, repeated: IdentityAttestation | null): boolean {
  if (repeated === null) return true
  return stored !== null && stored.identityCommitment === repeated.identityCommitment
}
