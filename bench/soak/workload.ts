// The soak's clients: users signed in by e-mail code, each signing documents (first signatures and chained ones),
// verifying anchors (hot ones the cache holds, fresh ones it does not), and syncing a library from two devices whose
// clocks disagree; new users sign in and some sign out. Requests arrive at fixed rates, whatever the answers.
import { randomBytes, randomUUID } from 'node:crypto'
import { toBase64Url, ZERO_TX_HASH } from '@docanchor/client'
import type { Hex } from 'viem'
import type { SmtpInbox } from '../../test/auth/smtp-inbox.ts'
import { type LibraryChange, type LibraryKind, LibraryModel } from './library-model.ts'
import type { Recorder } from './recorder.ts'

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
/** Items each user's devices edit: few, so that the devices keep editing and deleting the same ones. */
const ITEMS_PER_KIND = 3
/** Device B's clock runs this far behind: its later edits can lose to device A's earlier ones. */
const DEVICE_B_SKEW_MS = 2_000
const RETRY_EVERY_MS = 2_000
const HOT_ANCHORS = 16

export interface Rates {
  relay: number
  verifyCached: number
  verifyUncached: number
  sync: number
  signIn: number
}

export const DEFAULT_RATES: Rates = { relay: 3, verifyCached: 8, verifyUncached: 2, sync: 3, signIn: 0.5 }

interface RelayBody {
  compositeHash: Hex
  previousTxHash: Hex
  encryptedPayload: string
}

interface Document {
  /** The tx hash of its last confirmed signature; undefined until the first one is confirmed. */
  last: Hex | undefined
  busy: boolean
}

interface Device {
  name: 'A' | 'B'
  skewMs: number
  busy: boolean
  /** Changes sent without an answer yet, re-sent with the next sync. */
  outbox: Map<string, LibraryChange>
}

export interface SoakUser {
  email: string
  token: string
  documents: Document[]
  devices: Device[]
  itemIds: Record<LibraryKind, string[]>
}

/** A setup user's webhook: where it delivers (the receiver's endpoint name) and its secret. */
export interface SoakWebhook {
  endpoint: string
  secret: string
  email: string
}

export interface Acknowledged {
  compositeHash: Hex
  previousTxHash: Hex
  txHash: Hex
}

export interface VerifyAnswer {
  txHash: Hex
  compositeHash: Hex
  previousTxHash: Hex
  signer: string
  chain: Hex[]
  /** Answered by HAProxy's cache (deploy/haproxy.cfg), not by an instance. */
  cached: boolean
}

interface OpenRelay {
  user: SoakUser
  document: Document
  body: RelayBody
  nextTryAt: number
}

export class Workload {
  readonly users: SoakUser[] = []
  readonly library = new LibraryModel()
  readonly acknowledged: Acknowledged[] = []
  readonly verifyAnswers: VerifyAnswer[] = []
  readonly webhooks: SoakWebhook[] = []
  readonly unexpected: string[] = []
  /** Answers acceptable only while a fault lasts: checked against the fault windows at the end. */
  readonly incidents: { what: string; at: number }[] = []
  /** Tokens signed out: every instance must refuse them. */
  /** Each signed-out session's token, and when the sign-out was answered. */
  readonly loggedOut: { token: string; at: number }[] = []
  private readonly openRelays = new Set<OpenRelay>()
  private readonly renewals = new Map<SoakUser, Promise<void>>()
  private readonly unverified: Hex[] = []
  private signIns = 0
  private timers: NodeJS.Timeout[] = []
  private inFlight = new Set<Promise<unknown>>()

  constructor(
    private readonly recorder: Recorder,
    private readonly inbox: SmtpInbox,
    private readonly instanceUrls: () => string[],
  ) {}

  private probeUser: SoakUser | undefined

  /**
   * Signs in the first users (and the probes' own), one after another through the balancer; each registers a webhook
   * at `webhookBase` for the anchor events.
   */
  async setUp(count: number, webhookBase: string): Promise<void> {
    for (let i = 0; i <= count; i++) {
      const user = await this.signIn(false)
      if (!user) throw new Error('a setup sign-in failed')
    }
    this.probeUser = this.users.pop()
    for (const [index, user] of this.users.entries()) {
      const endpoint = `user-${index}`
      const created = await this.recorder.send<{ secret: string }>('webhook', 'POST', '/api/webhooks', {
        token: user.token,
        body: { url: `${webhookBase}${endpoint}`, events: ['anchor.confirmed', 'anchor.reorged', 'anchor.failed'] },
        record: false,
      })
      if (created.status !== 201) throw new Error(`a setup webhook was refused: ${created.status}`)
      this.webhooks.push({ endpoint, secret: created.body.secret, email: user.email })
    }
  }

  /** Through the balancer: a fresh relay is confirmed at once, its verify answers, a library sync is accepted. */
  async probe(): Promise<boolean> {
    const user = this.probeUser!
    const body: RelayBody = {
      compositeHash: `0x${randomBytes(32).toString('hex')}`,
      previousTxHash: ZERO_TX_HASH,
      encryptedPayload: toBase64Url(randomBytes(48)),
    }
    const relay = await this.recorder.send<{ txHash: Hex }>('probe', 'POST', '/api/relay', {
      token: user.token,
      body,
      record: false,
    })
    if (relay.status !== 201) {
      // Whatever became of it, the drain settles it like any other relay.
      if (relay.status === 202 || relay.status === 0 || relay.status >= 500) {
        this.openRelays.add({ user, document: { last: undefined, busy: true }, body, nextTryAt: Date.now() })
      }
      return false
    }
    this.acknowledged.push({ ...body, txHash: relay.body.txHash })
    const verify = await this.recorder.send('probe', 'GET', `/api/verify/${relay.body.txHash}`, { record: false })
    const device = user.devices[0]!
    if (device.busy) return false
    this.addChanges(user, device)
    await this.syncDevice(user, device, false)
    return verify.status === 200 && device.outbox.size === 0
  }

  start(rates: Rates): void {
    const every = (perSecond: number, job: () => Promise<unknown>) => {
      if (perSecond <= 0) return
      this.timers.push(setInterval(() => this.track(job()), 1000 / perSecond))
    }
    every(rates.relay, () => this.relay())
    every(rates.verifyCached, () => this.verifyCached())
    every(rates.verifyUncached, () => this.verifyUncached())
    every(rates.sync, () => this.sync())
    every(rates.signIn, () => this.signIn(true))
    this.timers.push(setInterval(() => this.track(this.retryRelays()), 500))
  }

  /** No new arrivals; waits for what is in flight. */
  async stopArrivals(): Promise<void> {
    for (const timer of this.timers) clearInterval(timer)
    this.timers = []
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight])
  }

  /** Re-sends every unanswered relay and sync until each has its answer, or until `timeoutMs`. */
  async drain(timeoutMs: number): Promise<{ openRelays: number; openSyncs: number }> {
    const deadline = Date.now() + timeoutMs
    const openSyncs = () => this.users.flatMap((u) => u.devices).filter((d) => d.outbox.size > 0)
    while (Date.now() < deadline && (this.openRelays.size > 0 || openSyncs().length > 0)) {
      await Promise.all([
        this.retryRelays(),
        ...this.users.flatMap((user) =>
          user.devices.filter((d) => d.outbox.size > 0 && !d.busy).map((d) => this.syncDevice(user, d, false)),
        ),
      ])
      await new Promise((resolve) => setTimeout(resolve, 500))
    }
    return { openRelays: this.openRelays.size, openSyncs: openSyncs().length }
  }

  private track(work: Promise<unknown>): void {
    this.inFlight.add(work)
    void work.finally(() => this.inFlight.delete(work))
  }

  private pick<T>(items: T[]): T | undefined {
    return items[Math.floor(Math.random() * items.length)]
  }

  // --- sign-in and sign-out -------------------------------------------------------------------------------------

  private async signIn(measured: boolean): Promise<SoakUser | undefined> {
    const email = `soak-${++this.signIns}-${randomBytes(3).toString('hex')}@example.com`
    const token = await this.signInToken(email, measured)
    if (!token) return undefined
    const user = this.newUser(email, token)
    if (measured && Math.random() < 0.4) await this.signOut(user)
    else this.users.push(user)
    return user
  }

  /** An e-mail code asked for and typed in: the session's token, or undefined when a step failed for good. */
  private async signInToken(email: string, record: boolean): Promise<string | undefined> {
    const sent = await this.recorder.send('sign-in: code', 'POST', '/api/auth/magic-link', { body: { email }, record })
    if (sent.status !== 202) return undefined
    const code = await this.inbox.nextCode(email, 30_000).catch(() => undefined)
    if (!code) {
      this.incidents.push({ what: 'sign-in mail lost after a 202', at: Date.now() })
      return undefined
    }
    // A lost answer leaves the code used or not: a client asks for a new one; so does the soak, a few times.
    for (let attempt = 0; attempt < 3; attempt++) {
      const verified = await this.recorder.send<{ token: string }>(
        'sign-in: verify',
        'POST',
        '/api/auth/magic-link/verify',
        { body: { email, code }, record },
      )
      if (verified.status === 200) return verified.body.token
      if (verified.status !== 0 && verified.status < 500) break
      await new Promise((resolve) => setTimeout(resolve, 1_000))
    }
    return undefined
  }

  /**
   * A session refused (401): one the database lost with its last commits, or its account with it. As the desktop app
   * asks its user to, the devices sign in again with the same address and send again what they still hold. One
   * renewal at a time per user; a failed one is tried again at the next refusal.
   */
  private renewSession(user: SoakUser): Promise<void> {
    let renewal = this.renewals.get(user)
    if (!renewal) {
      renewal = this.signInToken(user.email, true)
        .then((token) => {
          if (token) user.token = token
        })
        .finally(() => this.renewals.delete(user))
      this.renewals.set(user, renewal)
    }
    return renewal
  }

  private newUser(email: string, token: string): SoakUser {
    const device = (name: 'A' | 'B', skewMs: number): Device => ({ name, skewMs, busy: false, outbox: new Map() })
    return {
      email,
      token,
      documents: [],
      devices: [device('A', 0), device('B', DEVICE_B_SKEW_MS)],
      itemIds: {
        signatures: Array.from({ length: ITEMS_PER_KIND }, () => randomUUID()),
        snippets: Array.from({ length: ITEMS_PER_KIND }, () => randomUUID()),
      },
    }
  }

  /** Signs out through the balancer, then asks every instance directly: each must refuse the token at once. */
  private async signOut(user: SoakUser): Promise<void> {
    const me = await this.recorder.send('me', 'GET', '/api/auth/me', { token: user.token })
    if (me.status !== 200) return
    const out = await this.recorder.send('logout', 'POST', '/api/auth/logout', { token: user.token })
    if (out.status !== 204) return
    this.loggedOut.push({ token: user.token, at: Date.now() })
    for (const base of this.instanceUrls()) {
      const after = await this.recorder.send('me', 'GET', '/api/auth/me', { token: user.token, base, record: false })
      if (after.status === 200) this.unexpected.push(`a signed-out session still worked on ${base}`)
    }
  }

  // --- relays ---------------------------------------------------------------------------------------------------

  private async relay(): Promise<void> {
    const user = this.pick(this.users)
    if (!user) return
    const chainable = user.documents.filter((d) => !d.busy && d.last !== undefined)
    let document: Document
    if (chainable.length > 0 && Math.random() < 0.5) document = this.pick(chainable)!
    else {
      document = { last: undefined, busy: false }
      user.documents.push(document)
    }
    document.busy = true
    const body: RelayBody = {
      compositeHash: `0x${randomBytes(32).toString('hex')}`,
      previousTxHash: document.last ?? ZERO_TX_HASH,
      encryptedPayload: toBase64Url(randomBytes(48)),
    }
    await this.sendRelay({ user, document, body, nextTryAt: 0 }, 'relay')
  }

  private async retryRelays(): Promise<void> {
    const now = Date.now()
    const due = [...this.openRelays].filter((open) => open.nextTryAt <= now)
    for (const open of due) open.nextTryAt = Number.POSITIVE_INFINITY
    await Promise.all(due.map((open) => this.sendRelay(open, 'relay: repeat')))
  }

  /** One attempt; a pending or unanswered relay is repeated (the contract's way to wait) until it is confirmed. */
  private async sendRelay(open: OpenRelay, kind: string): Promise<void> {
    const answer = await this.recorder.send<{ txHash: Hex; status: string }>(kind, 'POST', '/api/relay', {
      token: open.user.token,
      body: open.body,
    })
    if ((answer.status === 200 || answer.status === 201) && answer.body.status === 'confirmed') {
      this.openRelays.delete(open)
      open.document.last = answer.body.txHash
      open.document.busy = false
      this.acknowledged.push({ ...open.body, txHash: answer.body.txHash })
      this.unverified.push(answer.body.txHash)
      return
    }
    if (answer.status === 202 || answer.status === 0 || answer.status >= 500) {
      open.nextTryAt = Date.now() + RETRY_EVERY_MS
      this.openRelays.add(open)
      return
    }
    this.unexpected.push(`relay answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 200)}`)
    if (answer.status === 401) {
      // The relay is repeated under the new session: its composite hash may be on chain already.
      open.nextTryAt = Number.POSITIVE_INFINITY
      this.openRelays.add(open)
      await this.renewSession(open.user)
      open.nextTryAt = Date.now()
      return
    }
    this.openRelays.delete(open)
    open.document.busy = false
  }

  // --- verifies -------------------------------------------------------------------------------------------------

  private async verifyCached(): Promise<void> {
    const txHash = this.pick(this.acknowledged.slice(0, HOT_ANCHORS))?.txHash
    if (txHash) await this.verify('verify: cached', txHash)
  }

  /** The newest anchor no one verified yet (the cache cannot hold it), else a hash that was never anchored. */
  private async verifyUncached(): Promise<void> {
    const txHash = this.unverified.pop()
    if (txHash) await this.verify('verify: uncached', txHash)
    else await this.verify('verify: unknown', `0x${randomBytes(32).toString('hex')}`)
  }

  private async verify(kind: string, txHash: Hex): Promise<void> {
    const answer = await this.recorder.send<{
      compositeHash: Hex
      previousTxHash: Hex
      signer: string
      chain: { txHash: Hex }[]
    }>(kind, 'GET', `/api/verify/${txHash}`)
    if (answer.status === 200) {
      const { compositeHash, previousTxHash, signer, chain } = answer.body
      this.verifyAnswers.push({
        txHash,
        compositeHash,
        previousTxHash,
        signer,
        chain: chain.map((e) => e.txHash),
        cached: answer.cached,
      })
    } else if (answer.status === 404 && kind === 'verify: unknown') {
      // expected
    } else if (answer.status === 404) {
      // A reorg takes a confirmed transaction off the chain until it is mined again.
      this.incidents.push({ what: 'verify of an acknowledged anchor answered 404', at: Date.now() })
    } else if (answer.status !== 0 && answer.status < 500) {
      this.unexpected.push(`verify of ${txHash} answered ${answer.status}`)
    }
  }

  // --- library --------------------------------------------------------------------------------------------------

  private async sync(): Promise<void> {
    const user = this.pick(this.users)
    const device = user && this.pick(user.devices.filter((d) => !d.busy))
    if (!user || !device) return
    this.addChanges(user, device)
    await this.syncDevice(user, device, true)
  }

  /** One or two edits or deletions of the user's few items, stamped with the device's clock. */
  private addChanges(user: SoakUser, device: Device): void {
    const count = 1 + Math.floor(Math.random() * 2)
    for (let i = 0; i < count; i++) {
      const kind: LibraryKind = Math.random() < 0.5 ? 'signatures' : 'snippets'
      const id = this.pick(user.itemIds[kind])!
      const at = this.library.uniqueClock(user.email, kind, id, Date.now() - device.skewMs)
      const label = Math.random() < 0.25 ? undefined : `${device.name}-${randomBytes(4).toString('hex')}`
      // A newer local change of the same item supersedes the unsent one: the device keeps its own last write.
      device.outbox.set(`${kind}:${id}`, { kind, id, at, label })
    }
  }

  private async syncDevice(user: SoakUser, device: Device, measured: boolean): Promise<void> {
    device.busy = true
    const changes = [...device.outbox.values()]
    for (const change of changes) this.library.sent(user.email, change)
    const part = (kind: LibraryKind) => ({
      upsert: changes
        .filter((c) => c.kind === kind && c.label !== undefined)
        .map((c) => {
          const stamp = new Date(c.at).toISOString()
          const common = { id: c.id, label: c.label!, updatedAt: stamp, createdAt: stamp }
          return kind === 'signatures'
            ? { ...common, base64Png: Buffer.concat([PNG, randomBytes(64)]).toString('base64') }
            : { ...common, text: `text ${c.label}`, fontSize: 12 }
        }),
      delete: changes
        .filter((c) => c.kind === kind && c.label === undefined)
        .map((c) => ({ id: c.id, deletedAt: new Date(c.at).toISOString() })),
    })
    const sentAt = Date.now()
    const answer = await this.recorder.send('library sync', 'PUT', '/api/library/sync', {
      token: user.token,
      body: { signatures: part('signatures'), snippets: part('snippets') },
      record: measured,
    })
    for (const change of changes) change.lastSent = { from: sentAt, to: Date.now() }
    if (answer.status === 200) {
      for (const change of changes) {
        if (device.outbox.get(`${change.kind}:${change.id}`) === change)
          device.outbox.delete(`${change.kind}:${change.id}`)
      }
    } else if (answer.status !== 0 && answer.status < 500) {
      this.unexpected.push(`library sync answered ${answer.status}: ${JSON.stringify(answer.body).slice(0, 300)}`)
      // Refused for its session, the changes wait for the next one; refused for what they are, they are dropped.
      if (answer.status === 401) await this.renewSession(user)
      else device.outbox.clear()
    }
    device.busy = false
  }
}
