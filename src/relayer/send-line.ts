// One relayer key's line to the node: what this process knows of which nonces the node holds, which nonces its own
// requests are about to send, and the sends waiting for their turn. Hardhat's automine refuses a nonce above the next
// one, Ganache holds its answer to one until the gap fills, and providers bound or drop gapped transactions: a
// transaction goes out only once every lower nonce is with the node, together with the consecutive nonces waiting
// behind it (actions/send-in-order.ts decides; this keeps the state and wakes the waiting).
import type { SendOutcome, ToSend } from './send-outcome.ts'

/** A send waiting in the line: sent by its own request, or in the batch of the one just below it. */
export interface QueuedSend extends ToSend {
  state: 'waiting' | 'sending' | 'done'
  outcome?: SendOutcome
}

/** Most consecutive nonces sent in one batch request. */
const MAX_RUN = 20

export class SendLine {
  /** The lowest nonce not known to be with the node; undefined until the node is asked (again). */
  next: number | undefined
  /** Nonces reserved by this process's requests whose send has not happened yet. */
  private readonly coming = new Set<number>()
  private readonly queued = new Map<number, QueuedSend>()
  private wakers: (() => void)[] = []
  /** The one gap-filling in flight for this key: concurrent senders share it. */
  filling: Promise<void> | undefined

  /** A request of this process reserved `nonce` and will send it. */
  expect(nonce: number): void {
    this.coming.add(nonce)
  }

  /** The request holding `nonce` sent it (or gave up): lower nonces no longer wait on it. */
  settle(nonce: number): void {
    if (this.coming.delete(nonce)) this.wake()
  }

  /** The node holds `nonce` (it took it, or holds it already). */
  delivered(nonce: number): void {
    if (this.next === undefined || this.next <= nonce) this.next = nonce + 1
    this.wake()
  }

  /** What the node said of its next nonce; lower than we thought when it lost transactions (a restart). */
  learned(nodeNext: number): void {
    this.next = nodeNext
    this.wake()
  }

  /** Whether a request of this process is about to send a nonce in [from, below). */
  comingBetween(from: number, below: number): boolean {
    for (const nonce of this.coming) if (nonce >= from && nonce < below) return true
    return false
  }

  isComing(nonce: number): boolean {
    return this.coming.has(nonce)
  }

  enqueue(send: QueuedSend): void {
    this.queued.set(send.tx.nonce, send)
  }

  dequeue(send: QueuedSend): void {
    if (this.queued.get(send.tx.nonce) === send) this.queued.delete(send.tx.nonce)
  }

  /** `first` and the consecutive nonces waiting behind it, marked as sending: one batch, in nonce order. */
  takeRun(first: QueuedSend): QueuedSend[] {
    const run = [first]
    for (let nonce = first.tx.nonce + 1; run.length < MAX_RUN; nonce++) {
      const next = this.queued.get(nonce)
      if (next?.state !== 'waiting') break
      run.push(next)
    }
    for (const send of run) send.state = 'sending'
    return run
  }

  /** Records what became of a run's sends and wakes those waiting on them. */
  finish(run: readonly QueuedSend[], outcomes: readonly SendOutcome[]): void {
    for (const [i, send] of run.entries()) {
      send.outcome = outcomes[i]!
      send.state = 'done'
      if (send.outcome.kind === 'sent') this.delivered(send.tx.nonce)
    }
    this.wake()
  }

  /** Resolves on the next change (a nonce sent, delivered or given up), or after `ms`. */
  changed(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wakers.push(done)
    })
  }

  private wake(): void {
    const wakers = this.wakers
    this.wakers = []
    for (const wake of wakers) wake()
  }
}
