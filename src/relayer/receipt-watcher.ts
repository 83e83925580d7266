// Waits for many receipts at the cost of one RPC call per new block (eth_getBlockReceipts), not one per waiting
// transaction per poll: 50 relays polling every 20 ms would otherwise flood the node that is trying to mine them.
import { setTimeout as sleep } from 'node:timers/promises'
import { LRUCache } from 'lru-cache'
import {
  type Address,
  formatTransactionReceipt,
  type Hash,
  numberToHex,
  type RpcTransactionReceipt,
  type TransactionReceipt,
} from 'viem'
import type { ChainClient } from '../chain/chain-client.ts'

interface Waiter {
  resolve(receipt: TransactionReceipt | null): void
  timer: NodeJS.Timeout
  /** The hashes whose receipt ends the wait: the first one, and every replacement of it. */
  keys: Set<string>
}

// Behind by more than this many blocks (a slow poll on a fast chain), asking for the waited hashes is cheaper.
const MAX_BLOCKS_PER_POLL = 32
/**
 * A poll for another waiter may deliver a receipt between a send and its wait: kept, the wait answers without asking
 * the node. Only the relayer's own transactions, and not many: a block's receipts on a busy chain are mostly others',
 * and keeping 20,000 of everyone's grew each instance's heap by some 30 MB in the soak's first hour.
 */
const RECENT_RECEIPTS = 1_000

export class ReceiptWatcher {
  private readonly waiters = new Map<string, Set<Waiter>>()
  private readonly recent = new LRUCache<string, TransactionReceipt>({ max: RECENT_RECEIPTS })
  private readonly senders: Set<string>
  private lastBlock: bigint | undefined
  private running = false
  private stopped = false
  private blockReceipts = true
  /** Until then, poll at a fifth of the interval: a receipt usually lands within milliseconds of the send. */
  private fastUntil = 0

  constructor(
    private readonly client: ChainClient,
    private readonly pollingIntervalMs: number,
    /** The relayer's addresses: the receipts of their transactions are the ones kept for a wait still to come. */
    senders: readonly Address[],
  ) {
    this.senders = new Set(senders.map((address) => address.toLowerCase()))
  }

  /** The receipt of `hash`, or null when none arrived within `timeoutMs`. */
  async wait(hash: Hash, timeoutMs: number): Promise<TransactionReceipt | null> {
    const key = hash.toLowerCase()
    const known = this.recent.get(key)
    if (known) return known
    if (timeoutMs <= 0 || this.stopped) return this.client.getTransactionReceipt({ hash }).catch(() => null)
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        keys: new Set(),
        timer: setTimeout(() => {
          this.finish(waiter, null)
        }, timeoutMs),
      }
      // Listening before asking: a poll that only asks for the waiters it knows of (pollHashes) must not run between
      // a "not yet" from the node and the listening, or it moves past the block that holds the receipt unseen.
      this.listen(key, waiter)
      this.fastUntil = Date.now() + this.pollingIntervalMs
      this.start()
      // Often mined already (an automining node mines within milliseconds of the send): one direct question too.
      void this.client
        .getTransactionReceipt({ hash })
        .then((receipt) => this.deliver(receipt))
        .catch(() => {
          // Not mined yet (or the node is briefly unreachable): the polls find it.
        })
    })
  }

  /** A replacement of `from` was sent: whoever waits for `from` also takes the receipt of `to`. */
  follow(from: Hash, to: Hash): void {
    const waiting = this.waiters.get(from.toLowerCase())
    if (!waiting) return
    for (const waiter of waiting) this.listen(to.toLowerCase(), waiter)
  }

  private listen(key: string, waiter: Waiter): void {
    waiter.keys.add(key)
    let set = this.waiters.get(key)
    if (!set) {
      set = new Set()
      this.waiters.set(key, set)
    }
    set.add(waiter)
  }

  private finish(waiter: Waiter, receipt: TransactionReceipt | null): void {
    clearTimeout(waiter.timer)
    for (const key of waiter.keys) {
      const set = this.waiters.get(key)
      set?.delete(waiter)
      if (set?.size === 0) this.waiters.delete(key)
    }
    waiter.resolve(receipt)
  }

  /** Resolves every waiter with null and stops polling. */
  stop(): void {
    this.stopped = true
    for (const set of [...this.waiters.values()]) for (const waiter of [...set]) this.finish(waiter, null)
  }

  private start(): void {
    if (this.running) return
    this.running = true
    void this.loop()
  }

  private async loop(): Promise<void> {
    try {
      while (this.waiters.size > 0 && !this.stopped) {
        await this.poll().catch(() => {
          // The node is briefly unreachable: waiters keep waiting until their own timeouts.
        })
        if (this.waiters.size === 0) break
        const fast = Date.now() < this.fastUntil
        await sleep(fast ? this.pollingIntervalMs / 5 : this.pollingIntervalMs)
      }
    } finally {
      this.running = false
      // Idle: the next waiter asks directly, and polling starts again from the head then.
      this.lastBlock = undefined
    }
  }

  private async poll(): Promise<void> {
    const head = await this.client.getBlockNumber({ cacheTime: 0 })
    const from = this.lastBlock === undefined ? undefined : this.lastBlock + 1n
    if (from !== undefined && from > head) return
    if (from === undefined || head - from >= BigInt(MAX_BLOCKS_PER_POLL) || !this.blockReceipts) {
      await this.pollHashes()
    } else {
      for (let block = from; block <= head; block++) {
        const receipts = await this.getBlockReceipts(block)
        if (receipts === undefined) {
          await this.pollHashes()
          break
        }
        for (const receipt of receipts) this.deliver(receipt)
      }
    }
    this.lastBlock = head
  }

  private async pollHashes(): Promise<void> {
    const hashes = [...this.waiters.keys()] as Hash[]
    const receipts = await Promise.all(
      hashes.map((hash) => this.client.getTransactionReceipt({ hash }).catch(() => null)),
    )
    for (const receipt of receipts) if (receipt) this.deliver(receipt)
  }

  private async getBlockReceipts(block: bigint): Promise<TransactionReceipt[] | undefined> {
    try {
      const raw = await this.client.request({
        method: 'eth_getBlockReceipts',
        params: [numberToHex(block)],
      })
      return (raw ?? []).map((r: RpcTransactionReceipt) => formatTransactionReceipt(r))
    } catch (error) {
      if (/not (found|supported|available)|does not exist/i.test(String((error as Error).message))) {
        this.blockReceipts = false
        return undefined
      }
      throw error
    }
  }

  private deliver(receipt: TransactionReceipt): void {
    const key = receipt.transactionHash.toLowerCase()
    if (this.senders.has(receipt.from.toLowerCase())) this.recent.set(key, receipt)
    const set = this.waiters.get(key)
    if (!set) return
    for (const waiter of [...set]) this.finish(waiter, receipt)
  }
}
