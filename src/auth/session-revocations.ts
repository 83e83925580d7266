// Ended sessions announced to every instance sharing one Redis: each drops the session from its cache of live ones at
// once, instead of trusting it until the cache entry expires. Best effort: while Redis is away, the expiry still bounds
// how long another instance accepts a revoked session.
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'

const CHANNEL = 'anchor:sessions:revoked'

export class SessionRevocations {
  private readonly subscriber: Redis

  /** `onRevoked` receives the key of each session any instance revoked (this one's own too). */
  constructor(
    private readonly redis: Redis,
    onRevoked: (key: string) => void,
    private readonly log: FastifyBaseLogger,
  ) {
    // A subscribed connection can issue nothing else: a second one, subscribed whenever it (re)connects, also when
    // Redis was away at start.
    this.subscriber = redis.duplicate()
    this.subscriber.on('error', (error: Error) => log.warn({ err: error.message }, 'redis subscriber error'))
    this.subscriber.on('ready', () => void this.subscribe())
    this.subscriber.on('message', (channel: string, key: string) => {
      if (channel === CHANNEL) onRevoked(key)
    })
  }

  /** Resolves once subscribed, or once the attempt failed (logged; it is made again when Redis comes back). */
  async start(): Promise<void> {
    if (this.subscriber.status === 'wait') await this.subscriber.connect().catch(() => {})
    if (this.subscriber.status === 'ready') await this.subscribe()
  }

  private async subscribe(): Promise<void> {
    try {
      await this.subscriber.subscribe(CHANNEL)
    } catch (error) {
      this.log.warn({ err: (error as Error).message }, 'session revocations not subscribed; other instances may lag')
    }
  }

  async announce(key: string): Promise<void> {
    await announceEndedSession(this.redis, key).catch((error: Error) => {
      this.log.warn({ err: error.message }, 'session revocation not announced; other instances may lag')
    })
  }

  close(): void {
    this.subscriber.disconnect()
  }
}

/** Tells every instance subscribed on `redis` to drop the session named `key` (sessions.ts `cacheKey`). */
export async function announceEndedSession(redis: Pick<Redis, 'publish'>, key: string): Promise<void> {
  await redis.publish(CHANNEL, key)
}
