// The background loop that finishes every relay: confirms, re-sends dropped transactions, replaces stuck ones with
// bumped fees, adopts whichever hash of a nonce got mined, re-sends after reorgs, fills nonce gaps. It reads all of its
// work from the database, so after a restart (or in another process) it picks up everything still open.
import type { Address, TransactionReceipt } from 'viem'
import { recordReceipt } from './actions/record-receipt.ts'
import { resync } from './actions/resync.ts'
import { signAndAttach } from './actions/sign-and-attach.ts'
import {
  addReplacement,
  claimForBroadcast,
  markFillerDone,
  type OpenTransaction,
  openTransactions,
  recentConfirmed,
  reopenMined,
  unsignedAnchors,
} from './outbox/monitor-queries.ts'
import { reissueAnchor } from './outbox/reservations.ts'
import { accountOf, type RelayContext, slotOf } from './relay-context.ts'
import { drainingRelayers } from './relayer-drains.ts'
import { broadcastRaw } from './send-raw.ts'
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
  private resynced = new Set<string>()
  private alerted = new Set<string>()

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
    context.pool.setDraining(await drainingRelayers(context.db, chainId))
    for (const { account, address } of context.pool.all) {
      if (this.resynced.has(address)) continue
      await resync(context, slotOf(context, address), account)
      this.resynced.add(address)
    }

    await this.signAbandonedReservations()
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
    for (const { address } of context.pool.all) context.pool.setJammed(address, jammed.has(address))
    await this.watchReorgs(head)
  }

  /** Settles one nonce; true when its transaction is stuck at the fee cap. */
  private async settle(group: NonceGroup, head: bigint, latestCount: number, highestAnchorNonce: number) {
    const { context } = this
    const { client } = context.chain
    const { settings, log, db } = context
    const anchorId = group.txs[0]!.anchorId
    const receipts = await Promise.all(
      group.txs.map((t) => client.getTransactionReceipt({ hash: t.txHash }).catch(() => null)),
    )
    const mined = receipts.find((r): r is TransactionReceipt => r !== null)
    if (mined) {
      if (head - mined.blockNumber + 1n < BigInt(settings.confirmations)) return false
      if (anchorId === null) await markFillerDone(db, mined.transactionHash.toLowerCase(), 'mined')
      else await recordReceipt(context, anchorId, mined)
      return false
    }

    const account = accountOf(context, group.relayer)
    if (!account) return false
    const slot = slotOf(context, group.relayer)
    if (latestCount > group.nonce) {
      // Mined, but none of our hashes: something else used this nonce. The anchor moves to a fresh nonce.
      if (anchorId === null) {
        for (const t of group.txs) await markFillerDone(db, t.txHash, 'failed')
        return false
      }
      if (group.txs[0]!.anchorStatus === 'confirmed') {
        log.error({ anchorId, nonce: group.nonce }, 'ALERT a confirmed anchor was reorged out and its nonce reused')
        return false
      }
      log.warn({ anchorId, nonce: group.nonce }, 'nonce used by another transaction: re-signing the anchor')
      const fees = await context.fees.current()
      const { tx } = await reissueAnchor(db, slot, anchorId, (nonce) =>
        resign(account, newestOf(group).raw, fees, nonce),
      )
      await broadcastRaw(client, tx.raw)
      return false
    }

    const newest = newestOf(group)
    const age = Date.now() - newest.createdAt.getTime()
    if (anchorId === null && newest.status === 'signed') {
      // An unsent filler: a relay may still reuse its nonce; send it only when anchors wait behind it.
      if (age < settings.stuckAfterMs || highestAnchorNonce < group.nonce) return false
      if (!(await claimForBroadcast(db, newest.txHash))) return false
      await broadcastRaw(client, newest.raw)
      return false
    }
    const known = await client.getTransaction({ hash: newest.txHash }).catch(() => null)
    if (!known) {
      // Dropped by the node (or never sent): the very same transaction again, before any thought of a higher fee.
      if (newest.status === 'signed' && !(await claimForBroadcast(db, newest.txHash))) return false
      const outcome = await broadcastRaw(client, newest.raw)
      log.info({ nonce: group.nonce, txHash: newest.txHash, outcome }, 're-sent a transaction the node did not have')
      // Refused as it is (its fee fell below the base fee, typically): only a replacement can move the nonce now.
      if (outcome !== 'rejected' && outcome !== 'underpriced') return false
    } else if (age < settings.stuckAfterMs) return false
    // A confirmed anchor back on the open list was reorged out: only ever re-send its very transaction.
    if (group.txs.some((t) => t.anchorStatus === 'confirmed')) return false
    if (newest.fees.maxFeePerGas >= context.fees.cap) {
      if (!this.alerted.has(newest.txHash)) {
        this.alerted.add(newest.txHash)
        log.error(
          { relayer: group.relayer, nonce: group.nonce, txHash: newest.txHash },
          'ALERT transaction stuck at the fee cap: re-sending at the cap; other relayers take new work',
        )
      }
      await broadcastRaw(client, newest.raw)
      return true
    }
    const current = await context.fees.current().catch(() => newest.fees)
    const bumped = await resign(account, newest.raw, context.fees.bump(newest.fees, settings.feeBumpPercent, current))
    await addReplacement(db, slot, { anchorId, nonce: group.nonce }, bumped)
    context.watcher.follow(newest.txHash, bumped.hash)
    const outcome = await broadcastRaw(client, bumped.raw)
    log.info(
      { nonce: group.nonce, txHash: bumped.hash, replaces: newest.txHash, outcome },
      'stuck transaction replaced',
    )
    return false
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
      await broadcastRaw(context.chain.client, signed.raw)
    }
  }

  /** Confirmed anchors whose block no longer holds their transaction: re-record or re-send the same transaction. */
  private async watchReorgs(head: bigint): Promise<void> {
    const { context } = this
    const { client } = context.chain
    const since = Number(head) - context.settings.reorgWatchBlocks
    const recent = await recentConfirmed(context.db, context.chain.chainId, Math.max(0, since))
    const byBlock = new Map<number, typeof recent>()
    for (const anchor of recent) byBlock.set(anchor.blockNumber, [...(byBlock.get(anchor.blockNumber) ?? []), anchor])
    await Promise.all(
      [...byBlock].map(async ([blockNumber, anchors]) => {
        const block = await client.getBlock({ blockNumber: BigInt(blockNumber) }).catch(() => null)
        const included = new Set((block?.transactions ?? []).map((h) => h.toLowerCase()))
        for (const anchor of anchors) {
          if (included.has(anchor.txHash)) continue
          const receipt = await client.getTransactionReceipt({ hash: anchor.txHash }).catch(() => null)
          if (receipt) {
            await recordReceipt(context, anchor.anchorId, receipt)
            continue
          }
          context.log.warn({ txHash: anchor.txHash }, 'confirmed anchor reorged out: re-sending the same transaction')
          await reopenMined(context.db, anchor.txHash)
        }
      }),
    )
  }
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
