// Announcements every instance sharing one Redis acts on at once: a session ended (each drops it from its cache of live
// sessions) or a stored ciphertext erased (each forgets its cached verifications of that transaction). While an
// instance is not subscribed (Redis restarting, away) it hears nothing: `listening` says so, and `onListening` runs
// each time it is subscribed again, so that a cache can drop what it may have missed meanwhile.
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

/** The channels, and what a message on each names. */
export const CHANNELS = {
  /** A session's cache key (sessions.ts `cacheKey`). */
  sessionEnded: 'anchor:sessions:revoked',
  /** A transaction hash whose stored ciphertext was erased. */
  payloadErased: 'anchor:verify:erased',
} as const

type Channel = (typeof CHANNELS)[keyof typeof CHANNELS]

export class RedisAnnouncements {
  private readonly subscriber: Redis
  private subscribed = false

  /**
   * `onMessage` receives every message any instance announced on `channel` (this one's own too); `onListening` runs
   * each time the subscription is made (again).
   */
  constructor(
    private readonly redis: Redis,
    private readonly channel: Channel,
    onMessage: (message: string) => void,
    private readonly log: FastifyBaseLogger,
    private readonly onListening: () => void = () => {},
  ) {
    // A subscribed connection can issue nothing else: a second one, subscribed whenever it (re)connects, also when
    // Redis was away at start.
    this.subscriber = redis.duplicate()
    this.subscriber.on('error', (error: Error) => log.warn({ err: error.message }, 'redis subscriber error'))
    this.subscriber.on('close', () => {
      this.subscribed = false
    })
    this.subscriber.on('ready', () => void this.subscribe())
    this.subscriber.on('message', (from: string, message: string) => {
      if (from === channel) onMessage(message)
    })
  }

  /** Resolves once subscribed, or once the attempt failed (logged; it is made again when Redis comes back). */
  async start(): Promise<void> {
    if (this.subscriber.status === 'wait') await this.subscriber.connect().catch(() => {})
    if (this.subscriber.status === 'ready') await this.subscribe()
  }

  /** Whether announcements reach this instance now: subscribed, on a connection that is up. */
  get listening(): boolean {
    return this.subscribed && this.subscriber.status === 'ready'
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(this.channel)
      this.subscribed = true
      this.onListening()
    } catch (error) {
      this.log.warn({ err: (error as Error).message, channel: this.channel }, 'not subscribed; other instances may lag')
    }
  }

  async announce(message: string): Promise<void> {
    await announce(this.redis, this.channel, message).catch((error: Error) => {
      this.log.warn({ err: error.message, channel: this.channel }, 'not announced; other instances may lag')
    })
  }

  close(): void {
    this.subscriber.disconnect()
  }
}

/** Tells every instance subscribed on `redis` (from a process that subscribes to nothing: `npm run admin`). */
export async function announce(redis: Pick<Redis, 'publish'>, channel: Channel, message: string): Promise<void> {
  await redis.publish(channel, message)
}
