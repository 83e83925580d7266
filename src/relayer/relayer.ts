// The relay path of one request: validate against the database and chain, persist the signed transaction, broadcast,
// wait for the receipt within the window. The monitor (monitor.ts) finishes whatever this leaves pending.

import { type IdentityAttestation, ZERO_TX_HASH } from '@docanchor/client'
import {
  type Address,
  encodeEventTopics,
  type Hex,
  type TransactionReceipt,
  TransactionReceiptNotFoundError,
} from 'viem'
import type { LocalAccount } from 'viem/accounts'
import type { ChainContext } from '../chain/chain-context.ts'
import { ChainUnavailableError } from '../chain/chain-errors.ts'
import { documentAnchorsAbi } from '../chain/document-anchors-artifact.ts'
import type { RelaySettings } from '../config.ts'
import type { Database } from '../db/database.ts'
import { type BroadcastOutcome, broadcastRaw } from './broadcast.ts'
import { AnchorConflictError, PreviousNotFoundError, QuotaExceededError, UserGoneError } from './errors.ts'
import { FeeOracle, type Fees } from './fees.ts'
import { GroupCommit } from './group-commit.ts'
import {
  type AnchorRow,
  findAnchorByCompositeHash,
  findAnchorById,
  isConfirmedAnchor,
  type Mined,
  markMined,
  UNSIGNED_PREFIX,
} from './outbox/anchors.ts'
import { ensureNonceRow, resyncNonce, type Slot } from './outbox/nonces.ts'
import {
  type Attachment,
  attachSigned,
  type NewAnchor,
  quotaPeriod,
  type ReserveResult,
  reissueAnchor,
  reserveAnchors,
  withdrawAnchor,
} from './outbox/reservations.ts'
import { ReceiptWatcher } from './receipt-watcher.ts'
import { RelayerPool, type RelayLogger } from './relayer-pool.ts'
import { anchorCallData, signCall, signFiller } from './signing.ts'

export const DOCUMENT_ANCHORED_TOPIC = encodeEventTopics({ abi: documentAnchorsAbi, eventName: 'DocumentAnchored' })[0]

export interface RelayRequest {
  userId: string
  compositeHash: Hex
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

export interface RelayerDependencies {
  db: Database
  chain: ChainContext
  settings: RelaySettings
  plans: Record<string, number>
  defaultPlan: string
  pollingIntervalMs: number
  log: RelayLogger
  onBalance?: (address: Address, ether: number) => void
}

// A node disagreeing about nonces twice in a row for one request means something else is sending with our key.
const MAX_REISSUES = 3

export class Relayer {
  readonly fees: FeeOracle
  readonly watcher: ReceiptWatcher
  readonly pool: RelayerPool
  private readonly nonceRows = new Map<string, Promise<void>>()
  private readonly reservations = new Map<string, GroupCommit<NewAnchor, ReserveResult>>()
  private readonly attachments = new Map<string, GroupCommit<Attachment, boolean>>()
  private readonly confirmations: GroupCommit<Mined, AnchorRow | undefined>

  constructor(readonly deps: RelayerDependencies) {
    this.fees = new FeeOracle(deps.chain.client, deps.settings)
    this.watcher = new ReceiptWatcher(deps.chain.client, deps.pollingIntervalMs)
    this.confirmations = new GroupCommit((items: Mined[]) => markMined(deps.db, items))
    this.pool = new RelayerPool(
      deps.chain.relayers,
      deps.chain.client,
      deps.settings.minBalance,
      deps.log,
      deps.onBalance,
      (address) => deps.chain.signerHealth?.isUp(address) ?? true,
    )
  }

  get chainId(): number {
    return this.deps.chain.chainId
  }

  slot(address: Address): Slot {
    return { chainId: this.chainId, relayer: address.toLowerCase() as Address }
  }

  account(address: string): LocalAccount | undefined {
    const lower = address.toLowerCase()
    return this.pool.all.find((r) => r.address === lower)?.account
  }

  async relay(request: RelayRequest): Promise<RelayResult> {
    const { db } = this.deps
    const compositeHash = request.compositeHash.toLowerCase() as Hex
    const previousTxHash = request.previousTxHash.toLowerCase() as Hex
    // No lookup first: the reservation itself fails on a taken composite hash, and only then is the anchor read.
    await this.checkPrevious(previousTxHash)

    const relayer = this.pool.acquire()
    if (!relayer)
      return this.repeatOr(request, new ChainUnavailableError('No relayer can take work now; try again later'))
    try {
      const slot = this.slot(relayer.address)
      let fees: Fees
      try {
        fees = await this.chainCall(() => this.fees.current())
        await this.chainCall(() => this.ensureNonceRow(slot, relayer.account))
      } catch (error) {
        // A client repeating a request to learn its anchor's state gets it even while no new work can be taken.
        return await this.repeatOr(request, error)
      }
      const { period, resetsAt } = quotaPeriod()
      const reserved = await this.reserve(slot, {
        compositeHash,
        previousTxHash,
        encryptedPayload: request.encryptedPayload,
        userId: request.userId,
        period,
        attestation: request.attestation ?? null,
      })
      if (reserved.kind === 'exists') {
        const raced = await findAnchorByCompositeHash(db, compositeHash)
        if (!raced) throw new Error('anchor vanished after a composite hash conflict')
        return this.repeat(request, raced)
      }
      if (reserved.kind === 'quota_exceeded') {
        throw new QuotaExceededError(reserved.limit, Math.max(reserved.used, reserved.limit), resetsAt)
      }
      if (reserved.kind === 'no_user') throw new UserGoneError()
      const { anchorId } = reserved
      const call = this.anchorCall(compositeHash, previousTxHash)
      let nonce = reserved.nonce
      let tx = await signCall(relayer.account, { ...call, nonce }, fees).catch((error: unknown) => {
        // A token key that failed or hung: the reservation stays, and the monitor signs it once the key is back.
        this.deps.log.warn({ relayer: relayer.address, anchorId }, 'relayer key could not sign: left to the monitor')
        throw new ChainUnavailableError('The relayer key could not sign; try again later', { cause: error })
      })
      if (!(await this.attach(slot, { anchorId, nonce, signed: tx }))) return this.current(anchorId)

      for (let attempt = 0; ; attempt++) {
        const outcome = await this.send(tx.raw, tx.hash)
        if (outcome === 'sent') break
        if (outcome === 'ambiguous') {
          // The node may hold it: keep it, answer pending, and let the monitor re-send or confirm it.
          this.deps.log.warn({ txHash: tx.hash }, 'broadcast outcome unknown: left to the monitor')
          return this.current(anchorId)
        }
        if (outcome === 'rejected' || attempt >= MAX_REISSUES) {
          const withdrawn = await withdrawAnchor(
            db,
            slot,
            { anchorId, userId: request.userId, period, nonce },
            (fillerNonce) => signFiller(relayer.account, this.chainId, fillerNonce, this.fees.last() ?? fees),
          )
          if (withdrawn) throw new ChainUnavailableError('The blockchain node refused or did not take the transaction')
          // The monitor took the transaction over and sends it: the anchor stays, pending.
          return this.current(anchorId)
        }
        // 'nonce-used' or 'underpriced' by a transaction that is not ours: the key was used elsewhere.
        await this.chainCall(() => this.resync(slot, relayer.account))
        ;({ tx, nonce } = await reissueAnchor(db, slot, anchorId, (next) =>
          signCall(relayer.account, { ...call, nonce: next }, fees),
        ))
      }

      const receipt = await this.waitMined(tx.hash, this.deps.settings.waitMs)
      if (receipt) {
        const anchor = await this.recordReceipt(anchorId, receipt)
        if (anchor) return { anchor, created: true }
      }
      return this.current(anchorId)
    } finally {
      this.pool.release(relayer.address)
    }
  }

  /** The call every anchor transaction makes; the monitor rebuilds it for reservations a crash left unsigned. */
  anchorCall(compositeHash: Hex, previousTxHash: Hex) {
    return {
      chainId: this.chainId,
      to: this.deps.chain.contractAddress,
      data: anchorCallData(compositeHash, previousTxHash),
      gas: this.deps.settings.gasLimit,
    }
  }

  private async repeatOr(request: RelayRequest, error: unknown): Promise<RelayResult> {
    const existing = await findAnchorByCompositeHash(this.deps.db, request.compositeHash.toLowerCase())
    if (!existing) throw error
    return this.repeat(request, existing)
  }

  private async current(anchorId: string): Promise<RelayResult> {
    const anchor = await findAnchorById(this.deps.db, anchorId)
    if (!anchor) throw new Error('anchor vanished')
    return { anchor, created: true }
  }

  /** The user's own anchor, for GET /api/anchors/:compositeHash. */
  async anchorOf(userId: string, compositeHash: string): Promise<AnchorRow | undefined> {
    const anchor = await findAnchorByCompositeHash(this.deps.db, compositeHash.toLowerCase())
    // A reservation not yet signed has no transaction to show (its request answers once it has one).
    if (anchor?.txHash.startsWith(UNSIGNED_PREFIX)) return undefined
    return anchor?.userId === userId ? anchor : undefined
  }

  /** Brings a relayer's nonce row in line with the chain (at start, and when the node disagrees). */
  async resync(slot: Slot, account: LocalAccount): Promise<void> {
    const { client } = this.deps.chain
    const [latest, pending] = await Promise.all([
      client.getTransactionCount({ address: account.address, blockTag: 'latest' }),
      client.getTransactionCount({ address: account.address, blockTag: 'pending' }),
    ])
    const fees = this.fees.last() ?? (await this.fees.current())
    const result = await resyncNonce(this.deps.db, slot, { latest, pending }, (nonce) =>
      signFiller(account, this.chainId, nonce, fees),
    )
    if (result.raisedTo !== undefined) {
      this.deps.log.warn(
        { relayer: slot.relayer, nextNonce: result.raisedTo },
        'relayer nonce raised to the chain: the key was used outside this service',
      )
    }
    if (result.filled.length > 0) {
      this.deps.log.warn({ relayer: slot.relayer, nonces: result.filled }, 'nonce gaps filled with self-transfers')
    }
    this.nonceRows.set(slot.relayer, Promise.resolve())
  }

  /** Sends, and resolves "nonce used" into "sent" when the node already has our own transaction. */
  async send(raw: Hex, hash: Hex): Promise<BroadcastOutcome> {
    const outcome = await broadcastRaw(this.deps.chain.client, raw)
    if (outcome !== 'nonce-used' && outcome !== 'underpriced') return outcome
    const known = await this.deps.chain.client.getTransaction({ hash }).catch(() => null)
    return known ? 'sent' : outcome
  }

  /** The receipt once it is `confirmations` deep, or null after `timeoutMs`. */
  async waitMined(hash: Hex, timeoutMs: number): Promise<TransactionReceipt | null> {
    const deadline = Date.now() + timeoutMs
    const receipt = await this.watcher.wait(hash, timeoutMs)
    if (!receipt) return null
    const needed = BigInt(this.deps.settings.confirmations - 1)
    if (needed === 0n) return receipt
    while (Date.now() < deadline) {
      const head = await this.deps.chain.client.getBlockNumber({ cacheTime: 0 }).catch(() => undefined)
      if (head !== undefined && head >= receipt.blockNumber + needed) return receipt
      await new Promise((resolve) => setTimeout(resolve, this.deps.pollingIntervalMs))
    }
    return null
  }

  async recordReceipt(anchorId: string, receipt: TransactionReceipt): Promise<AnchorRow | undefined> {
    const reverted = receipt.status !== 'success'
    if (reverted) {
      this.deps.log.error({ txHash: receipt.transactionHash }, 'ALERT anchor transaction reverted on chain')
    }
    return this.confirmations.submit({
      anchorId,
      txHash: receipt.transactionHash.toLowerCase(),
      blockNumber: Number(receipt.blockNumber),
      reverted,
    })
  }

  /** Reserves an anchor and its nonce, sharing one database call with the relays arriving meanwhile. */
  private reserve(slot: Slot, anchor: NewAnchor): Promise<ReserveResult> {
    const quota = { plans: this.deps.plans, defaultPlan: this.deps.defaultPlan }
    return groupFor(this.reservations, slot, (items: NewAnchor[]) =>
      reserveAnchors(this.deps.db, slot, items, quota),
    ).submit(anchor)
  }

  /** Stores a signed transaction before its broadcast, sharing one statement with concurrent relays. */
  attach(slot: Slot, attachment: Attachment): Promise<boolean> {
    return groupFor(this.attachments, slot, (items: Attachment[]) => attachSigned(this.deps.db, slot, items)).submit(
      attachment,
    )
  }

  stop(): void {
    this.watcher.stop()
  }

  private async repeat(request: RelayRequest, found: AnchorRow): Promise<RelayResult> {
    let existing = found
    const same =
      existing.userId === request.userId &&
      existing.previousTxHash === request.previousTxHash.toLowerCase() &&
      existing.encryptedPayload === request.encryptedPayload &&
      sameAttestation(existing.attestation, request.attestation ?? null)
    if (!same) throw new AnchorConflictError()
    if (existing.txHash.startsWith(UNSIGNED_PREFIX)) {
      // Reserved by a request that is signing it this very moment (or died doing so: the monitor finishes it).
      const deadline = Date.now() + this.deps.settings.waitMs
      while (existing.txHash.startsWith(UNSIGNED_PREFIX) && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, this.deps.pollingIntervalMs))
        existing = (await findAnchorById(this.deps.db, existing.id)) ?? existing
      }
      if (existing.txHash.startsWith(UNSIGNED_PREFIX)) throw new ChainUnavailableError()
    }
    if (existing.status === 'pending') {
      // Repeating the request is how a client waits: wait here as a first request would.
      const receipt = await this.waitMined(existing.txHash as Hex, this.deps.settings.waitMs).catch(() => null)
      if (receipt && receipt.transactionHash.toLowerCase() === existing.txHash) {
        return { anchor: (await this.recordReceipt(existing.id, receipt)) ?? existing, created: false }
      }
    }
    return { anchor: existing, created: false }
  }

  private async checkPrevious(previousTxHash: Hex): Promise<void> {
    if (previousTxHash === ZERO_TX_HASH) return
    if (await isConfirmedAnchor(this.deps.db, previousTxHash)) return
    let receipt: TransactionReceipt
    try {
      receipt = await this.deps.chain.client.getTransactionReceipt({ hash: previousTxHash })
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) throw new PreviousNotFoundError()
      throw new ChainUnavailableError(undefined, { cause: error })
    }
    const contract = this.deps.chain.contractAddress.toLowerCase()
    const anchored = receipt.logs.some(
      (log) => log.address.toLowerCase() === contract && log.topics[0] === DOCUMENT_ANCHORED_TOPIC,
    )
    if (!anchored) throw new PreviousNotFoundError()
  }

  private ensureNonceRow(slot: Slot, account: LocalAccount): Promise<void> {
    let ready = this.nonceRows.get(slot.relayer)
    if (!ready) {
      ready = this.deps.chain.client
        .getTransactionCount({ address: account.address, blockTag: 'pending' })
        .then((count) => ensureNonceRow(this.deps.db, slot, count))
      ready.catch(() => this.nonceRows.delete(slot.relayer))
      this.nonceRows.set(slot.relayer, ready)
    }
    return ready
  }

  /** Runs a chain call whose failure means the relay cannot go ahead: 502, nothing written yet. */
  private async chainCall<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work()
    } catch (error) {
      if (error instanceof ChainUnavailableError) throw error
      throw new ChainUnavailableError(undefined, { cause: error })
    }
  }
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

/** The relayer's own batcher of one kind of write: batches never mix relayers (each holds its own nonce row). */
function groupFor<T, R>(
  groups: Map<string, GroupCommit<T, R>>,
  slot: Slot,
  write: (items: T[]) => Promise<R[]>,
): GroupCommit<T, R> {
  let group = groups.get(slot.relayer)
  if (!group) {
    group = new GroupCommit(write)
    groups.set(slot.relayer, group)
  }
  return group
}
