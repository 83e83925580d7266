// The background loop that finishes every relay: confirms, re-sends dropped transactions, replaces stuck ones with
// bumped fees, adopts whichever hash of a nonce got mined, re-sends after reorgs, fills nonce gaps. It reads all of its
// work from the database, so after a restart (or in another process) it picks up everything still open.
import type { Address, Hex, TransactionReceipt } from 'viem'
import type { LocalAccount } from 'viem/accounts'
import { blockOrNull, receiptOrNull, transactionOrNull } from '../chain/definite-reads.ts'
import { type ExpectedAnchor, recordReceipt } from './actions/record-receipt.ts'
import { resync } from './actions/resync.ts'
import { sendInOrder } from './actions/send-in-order.ts'
import { nonceHolder } from './actions/send-signed.ts'
import { signAndAttach } from './actions/sign-and-attach.ts'
import {
  addReplacement,
  claimForBroadcast,
  finalizeAnchors,
  markFillerDone,
  type OpenTransaction,
  openTransactions,
  recentConfirmed,
  reopenMined,
  unsignedAnchors,
} from './outbox/monitor-queries.ts'
import { nextNonces } from './outbox/nonces.ts'
import { reissueAnchor } from './outbox/reservations.ts'
import type { Slot } from './outbox/slot.ts'
import { accountOf, keyAt, type RelayContext, slotOf } from './relay-context.ts'
import { drainingRelayers } from './relayer-drains.ts'
import type { Sendable, SendOutcome } from './send-outcome.ts'
import { resign } from './signing.ts'

/** A live request stores its signed transaction milliseconds after the reservation; this is long past that. */
const ABANDONED_AFTER_MS = 5_000

export interface MonitorOptions {
  intervalMs: number
  onPending?: (count: number) => void
}

export class RelayMonitor {
  private timer: NodeJS.Timeout | undefined
  private running: Promise<void> | undefined
  private stopped = false
  /** Keys this monitor resynced since it started, or since it last saw a nonce the chain waits for held by nothing. */
  private resynced = new Set<Address>()

  constructor(
    private readonly context: RelayContext,
    private readonly options: MonitorOptions,
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return
    const schedule = () => {
      if (this.stopped) return
      this.timer = setTimeout(async () => {
        await this.tick()
        schedule()
      }, this.options.intervalMs)
    }
    // The first pass at once: resync nonces and pick up whatever a previous run left pending.
    void this.tick().then(schedule)
  }

  async stop(): Promise<void> {
    this.stopped = true
    clearTimeout(this.timer)
    await this.running
  }

  /** One pass; never throws (a failing node or database is retried on the next pass). */
  tick(): Promise<void> {
    this.running ??= this.pass()
      .catch((error: unknown) => {
        this.context.log.warn({ err: error }, 'relay monitor pass failed; retrying next pass')
      })
      .finally(() => {
        this.running = undefined
      })
    return this.running
  }

  private async pass(): Promise<void> {
    const { context } = this
    const { client, chainId } = context.chain
    await context.pool.refreshBalances().catch(() => {})
    await context.contract.check()
    const latestByKey = await this.checkNonceRows()
    // A reconciliation that fails (the node or the database away) keeps relays waiting, not this pass: what the
    // database holds is still confirmed, re-sent and bumped.
    const reconciled = context.reconciliation.settled().then(
      () => true,
      (error: unknown) => {
        context.log.warn({ err: error }, 'reconciliation with the chain failed; relays wait, retrying next pass')
        return false
      },
    )
    const upToDate = await reconciled
    if (upToDate && context.reconciliation.followUpDue(latestByKey)) await context.reconciliation.run()
    context.pool.setDraining(await drainingRelayers(context.db, chainId))
    for (const { account, address } of context.pool.all) {
      if (this.resynced.has(address)) continue
      await resync(context, slotOf(context, address), account)
      this.resynced.add(address)
    }

    // Until the chain has been looked at, an unsigned reservation may sit on a nonce the chain consumed.
    if (upToDate) await this.signAbandonedReservations()
    const open = await openTransactions(context.db, chainId)
    this.options.onPending?.(new Set(open.filter((t) => t.anchorId !== null).map((t) => t.anchorId)).size)
    const head = await client.getBlockNumber({ cacheTime: 0 })
    const groups = groupByNonce(open)
    const relayers = new Set(groups.map((g) => g.relayer))
    const latestCounts = new Map<Address, number>()
    await Promise.all(
      [...relayers].map(async (address) => {
        const account = accountOf(context, address)
        if (!account) return
        latestCounts.set(address, await client.getTransactionCount({ address: account.address, blockTag: 'latest' }))
      }),
    )
    this.resyncWhereGap(groups, latestCounts)
    const jammed = new Set<Address>()
    for (const group of groups) {
      const latestCount = latestCounts.get(group.relayer)
      if (latestCount === undefined) continue
      const highestAnchorNonce = Math.max(
        -1,
        ...groups.filter((g) => g.relayer === group.relayer && g.txs[0]!.anchorId !== null).map((g) => g.nonce),
      )
      const atCap = await this.settle(group, head, latestCount, highestAnchorNonce).catch((error: unknown) => {
        context.log.warn({ err: error, nonce: group.nonce }, 'relay monitor could not settle a nonce')
        return false
      })
      if (atCap) jammed.add(group.relayer)
    }
    for (const key of context.pool.all) key.jammed = jammed.has(key.address)
    await this.watchReorgs(head)
    const finalThrough = Number(head) - context.settings.finalityConfirmations + 1
    await finalizeAnchors(context.db, chainId, finalThrough, context.chain.contractAddress)
  }

  /**
   * A key whose nonce on chain passed the database's nonce row sent transactions the database does not know: it was
   * restored or failed over, or the key is used elsewhere. Either way, what it did is looked up before relays go on.
   */
  private async checkNonceRows(): Promise<Map<Address, number>> {
    const { context } = this
    const rowsNow = await nextNonces(context.db, context.chain.chainId)
    const latestByKey = new Map<Address, number>(
      await Promise.all(
        context.pool.all.map(
          async ({ address, account }) =>
            [
              address,
              await context.chain.client.getTransactionCount({ address: account.address, blockTag: 'latest' }),
            ] as const,
        ),
      ),
    )
    for (const [address, latest] of latestByKey) {
      const next = rowsNow.get(address)
      if (next !== undefined && latest > next) {
        context.log.warn(
          { relayer: address, chainNonce: latest, nextNonce: next },
          'key nonce on chain passed the database',
        )
        context.reconciliation.require('nonce on chain passed the database')
      }
    }
    return latestByKey
  }

  /**
   * Settles one nonce; true when its transaction is stuck at the fee cap. Which handler it takes depends on what the
   * chain shows, in this order: one of its hashes mined, its nonce used by another transaction, an unsent filler
   * waiting, its newest transaction dropped by the node, or still pending too long.
   */
  private async settle(group: NonceGroup, head: bigint, latestCount: number, highestAnchorNonce: number) {
    const { context } = this
    const hashes = hashesOf(group)
    // A failed read proves nothing: the nonce waits for the next pass.
    const receipts = await Promise.all(hashes.map((hash) => receiptOrNull(context.chain.client, hash))).catch(
      () => undefined,
    )
    if (!receipts) return false
    const mined = receipts.find((r): r is TransactionReceipt => r !== null)
    if (mined) {
      await this.onMined(group, mined, head)
      return false
    }

    const account = accountOf(context, group.relayer)
    if (!account) return false
    const slot = slotOf(context, group.relayer)
    // A request of this process is about to send this nonce itself (it waits for its turn in nonce order).
    if (keyAt(context, slot).line.isComing(group.nonce)) return false
    if (latestCount > group.nonce) {
      await this.onNonceTaken(group, slot, account)
      return false
    }

    const newest = newestOf(group)
    if (group.txs[0]!.anchorId === null && newest.status === 'signed') {
      await this.onUnsentFiller(group, slot, highestAnchorNonce)
      return false
    }
    const known = await transactionOrNull(context.chain.client, newest.txHash).catch(() => undefined)
    if (known === undefined) return false
    // A transaction only its request has sent so far is claimed before the monitor sends it or replaces it, so that
    // request no longer withdraws it.
    let claimed = newest.status !== 'signed'
    if (known === null) {
      if ((await this.onDropped(group, slot, claimed)) === 'settled') return false
      claimed = true
    } else if (Date.now() - newest.createdAt.getTime() < context.settings.stuckAfterMs) return false
    return this.onStuck(group, slot, account, claimed)
  }

  /** Mined: recorded once confirmations deep (a filler is done). */
  private async onMined(group: NonceGroup, mined: TransactionReceipt, head: bigint): Promise<void> {
    const { context } = this
    if (head - mined.blockNumber + 1n < BigInt(context.settings.confirmations)) return
    const first = group.txs[0]!
    if (first.anchorId === null) await markFillerDone(context.db, mined.transactionHash.toLowerCase(), 'mined')
    else await recordReceipt(context, expectedAnchor(first), mined)
  }

  /** Mined, but none of our hashes (each asked again, with the count, of one node): another transaction used it. */
  private async onNonceTaken(group: NonceGroup, slot: Slot, account: LocalAccount): Promise<void> {
    const { context } = this
    const { log, db } = context
    const first = group.txs[0]!
    const anchorId = first.anchorId
    const hashes = hashesOf(group)
    if ((await nonceHolder(context, slot, group.nonce, hashes)) !== 'another') return
    if (anchorId === null) {
      for (const t of group.txs) await markFillerDone(db, t.txHash, 'outrun')
      return
    }
    if (first.anchorStatus === 'confirmed') {
      log.error({ anchorId, nonce: group.nonce }, 'ALERT a confirmed anchor was reorged out and its nonce reused')
      return
    }
    // Perhaps ours: a transaction of this anchor the database forgot (a fee bump) mined at its nonce. The chain is
    // looked at first, or a new nonce would anchor the composite hash a second time.
    const { lookedUpOnChain } = keyAt(context, slot)
    const seenAt = lookedUpOnChain.get(group.nonce)
    if (seenAt === undefined) {
      lookedUpOnChain.set(group.nonce, context.reconciliation.completed)
      context.reconciliation.require('a nonce of ours was used by a transaction the database does not hold')
      return
    }
    // A reconciliation that failed, or has not run since, has not looked: re-signing now could anchor twice.
    if (context.reconciliation.due || context.reconciliation.completed <= seenAt) return
    lookedUpOnChain.delete(group.nonce)
    log.warn({ anchorId, nonce: group.nonce }, 'nonce used by another transaction: re-signing the anchor')
    const fees = await context.fees.current()
    const reissued = await reissueAnchor(db, slot, anchorId, (next) => resign(account, newestOf(group).raw, fees, next))
    // Mined meanwhile: the next pass records it.
    if (!reissued) return
    await this.send(slot, { ...reissued.tx, nonce: reissued.nonce })
  }

  /** An unsent filler: a relay may still reuse its nonce; it is sent only when anchors wait behind it. */
  private async onUnsentFiller(group: NonceGroup, slot: Slot, highestAnchorNonce: number): Promise<void> {
    const newest = newestOf(group)
    const age = Date.now() - newest.createdAt.getTime()
    if (age < this.context.settings.stuckAfterMs || highestAnchorNonce < group.nonce) return
    if (!(await claimForBroadcast(this.context.db, newest.txHash))) return
    await this.send(slot, sendableOf(group))
  }

  /**
   * Dropped by the node (or never sent): the very same transaction again, before any thought of a higher fee.
   * 'replace' when the node refused it on its fee (which fell below the base fee, typically): only a replacement can
   * move the nonce now.
   */
  private async onDropped(group: NonceGroup, slot: Slot, claimed: boolean): Promise<'settled' | 'replace'> {
    const newest = newestOf(group)
    if (!claimed && !(await claimForBroadcast(this.context.db, newest.txHash))) return 'settled'
    const outcome = await this.send(slot, sendableOf(group), hashesOf(group))
    this.context.log.info(
      { nonce: group.nonce, txHash: newest.txHash, outcome: outcome.kind, reason: reasonOf(outcome) },
      're-sent a transaction the node did not have',
    )
    return outcome.kind === 'underpriced' ? 'replace' : 'settled'
  }

  /** Pending too long (or refused on its fee): replaced at a bumped fee, or re-sent as it is at the fee cap. */
  private async onStuck(group: NonceGroup, slot: Slot, account: LocalAccount, claimed: boolean): Promise<boolean> {
    const { context } = this
    // A confirmed anchor back on the open list was reorged out: only ever re-send its very transaction.
    if (group.txs.some((t) => t.anchorStatus === 'confirmed')) return false
    const newest = newestOf(group)
    if (newest.fees.maxFeePerGas >= context.fees.cap) {
      await this.atFeeCap(group, slot)
      return true
    }
    if (!claimed && !(await claimForBroadcast(context.db, newest.txHash))) return false
    const hashes = hashesOf(group)
    const current = await context.fees.current().catch(() => newest.fees)
    const bumped = await resign(
      account,
      newest.raw,
      context.fees.bump(newest.fees, context.settings.feeBumpPercent, current),
    )
    const anchorId = group.txs[0]!.anchorId
    if (!(await addReplacement(context.db, slot, { anchorId, nonce: group.nonce }, bumped))) return false
    context.watcher.follow(newest.txHash, bumped.hash)
    const outcome = await this.send(slot, { ...bumped, nonce: group.nonce }, [...hashes, bumped.hash])
    context.log.info(
      { nonce: group.nonce, txHash: bumped.hash, replaces: newest.txHash, outcome: outcome.kind },
      'stuck transaction replaced',
    )
    return false
  }

  /** Stuck at the fee cap: re-sent as it is, alerted once; the pool gives other relayers new work meanwhile. */
  private async atFeeCap(group: NonceGroup, slot: Slot): Promise<void> {
    const newest = newestOf(group)
    const { alertedAtFeeCap } = keyAt(this.context, slot)
    if (!alertedAtFeeCap.has(newest.txHash)) {
      alertedAtFeeCap.add(newest.txHash)
      this.context.log.error(
        { relayer: group.relayer, nonce: group.nonce, txHash: newest.txHash },
        'ALERT transaction stuck at the fee cap: re-sending at the cap; other relayers take new work',
      )
    }
    await this.send(slot, sendableOf(group), hashesOf(group))
  }

  /**
   * A key with open transactions above its chain count and none at it: the nonce the chain waits for may be held by
   * nothing (a transaction of the key the database forgot, then dropped by the node). Its next pass resyncs the key,
   * which fills such a nonce with a self-transfer; resyncing finds nothing to do where the nonce is held after all.
   */
  private resyncWhereGap(groups: NonceGroup[], latestCounts: ReadonlyMap<Address, number>): void {
    for (const [relayer, latest] of latestCounts) {
      const above = groups.filter((g) => g.relayer === relayer && g.nonce >= latest)
      if (above.length > 0 && !above.some((g) => g.nonce === latest)) this.resynced.delete(relayer)
    }
  }

  /** The monitor's sends go in nonce order too; it does not wait for a gap another request may still fill. */
  private send(slot: Slot, tx: Sendable, ownAtNonce?: readonly Hex[]): Promise<SendOutcome> {
    return sendInOrder(this.context, slot, tx, { until: Date.now(), ownAtNonce })
  }

  /**
   * A request that died between reserving its anchor's nonce and storing the signed transaction left a nonce that
   * nothing will ever send: sign and send it here, so the nonces after it are not stuck behind a gap.
   */
  private async signAbandonedReservations(): Promise<void> {
    const { context } = this
    const abandoned = await unsignedAnchors(context.db, context.chain.chainId, ABANDONED_AFTER_MS)
    for (const anchor of abandoned) {
      const account = accountOf(context, anchor.relayer)
      // A token key out of rotation cannot sign yet: its reservation waits for the key to answer again.
      if (!account || !context.pool.signerUp(anchor.relayer)) continue
      const fees = await context.fees.current()
      const slot = slotOf(context, anchor.relayer)
      const signed = await signAndAttach(context, slot, account, { ...anchor, anchorId: anchor.id }, fees)
      if (!signed || !(await claimForBroadcast(context.db, signed.hash))) continue
      context.log.warn({ anchorId: anchor.id, nonce: anchor.nonce }, 'signed an anchor its request left unsigned')
      await this.send(slot, { ...signed, nonce: anchor.nonce })
    }
  }

  /**
   * Confirmed anchors whose block no longer holds their transaction: re-record or re-send the same transaction. Only
   * an answer is evidence: a block the node returned without the transaction, and no receipt for it anywhere. A read
   * that failed, or a block the node does not have (one behind its peers), leaves the anchor for the next pass.
   */
  private async watchReorgs(head: bigint): Promise<void> {
    const { context } = this
    const { client } = context.chain
    const since = Number(head) - context.settings.reorgWatchBlocks
    const recent = await recentConfirmed(context.db, context.chain.chainId, Math.max(0, since))
    const byBlock = new Map<number, typeof recent>()
    for (const anchor of recent) byBlock.set(anchor.blockNumber, [...(byBlock.get(anchor.blockNumber) ?? []), anchor])
    await Promise.all(
      [...byBlock].map(async ([blockNumber, anchors]) => {
        const block = await blockOrNull(client, BigInt(blockNumber)).catch(() => null)
        if (!block) return
        const included = new Set(block.transactions.map((h) => (typeof h === 'string' ? h : h.hash).toLowerCase()))
        for (const anchor of anchors) {
          if (included.has(anchor.txHash)) continue
          const receipt = await receiptOrNull(client, anchor.txHash).catch(() => undefined)
          if (receipt === undefined) continue
          if (receipt) {
            await recordReceipt(context, { ...anchor, id: anchor.anchorId }, receipt)
            continue
          }
          context.log.warn(
            { txHash: anchor.txHash, blockNumber, blockHash: block.hash },
            'confirmed anchor reorged out: re-sending the same transaction',
          )
          await reopenMined(context.db, anchor.txHash, context.chain.contractAddress)
        }
      }),
    )
  }
}

function expectedAnchor(tx: OpenTransaction): ExpectedAnchor {
  return { id: tx.anchorId!, compositeHash: tx.compositeHash!, previousTxHash: tx.previousTxHash! }
}

function reasonOf(outcome: SendOutcome): string | undefined {
  return 'reason' in outcome ? outcome.reason : undefined
}

interface NonceGroup {
  relayer: Address
  nonce: number
  txs: OpenTransaction[]
}

function groupByNonce(open: OpenTransaction[]): NonceGroup[] {
  const groups = new Map<string, NonceGroup>()
  for (const tx of open) {
    const key = `${tx.relayer}:${tx.nonce}`
    let group = groups.get(key)
    if (!group) {
      group = { relayer: tx.relayer, nonce: tx.nonce, txs: [] }
      groups.set(key, group)
    }
    group.txs.push(tx)
  }
  return [...groups.values()]
}

function newestOf(group: NonceGroup): OpenTransaction {
  return group.txs[group.txs.length - 1]!
}

/** Every hash signed at the nonce, oldest first: any one of them mined settles it. */
function hashesOf(group: NonceGroup): Hex[] {
  return group.txs.map((t) => t.txHash)
}

/** The nonce's newest transaction, to send as it is. */
function sendableOf(group: NonceGroup): Sendable {
  const newest = newestOf(group)
  return { raw: newest.raw, hash: newest.txHash, nonce: group.nonce }
}
