// Two instances sharing one database and one Redis: a logout on one ends the session on the other at once, not when
// the other's cache entry of live sessions expires. And a failover empties the cache of live sessions.
import { randomBytes } from 'node:crypto'
import { eq } from 'drizzle-orm'
import type { FastifyBaseLogger } from 'fastify'
import type { Redis } from 'ioredis'
import pino from 'pino'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { startPrivateRedis } from '../../bench/soak/redis-server.ts'
import { SessionChecker, startSession } from '../../src/auth/sessions.ts'
import { sessions, users } from '../../src/db/schema.ts'
import { connectRedis } from '../../src/redis-client.ts'
import { TEST_JWT_SECRET } from '../helpers/app.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'

const REDIS_URL = 'redis://127.0.0.1:6379'
const silent = pino({ level: 'silent' }) as FastifyBaseLogger
const jwt = { secret: TEST_JWT_SECRET, issuer: 'test-issuer', audience: 'test-audience' }

describe('session revocations across instances', () => {
  let database: TestDatabase
  const connections: Redis[] = []
  const checkers: SessionChecker[] = []

  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(async () => {
    for (const checker of checkers) checker.close()
    for (const connection of connections) connection.disconnect()
    await database?.close()
  })

  /** One instance's checker, with a cache that would trust a live session for a minute. */
  async function instance(shared: boolean, redisUrl = REDIS_URL): Promise<SessionChecker> {
    const checker = new SessionChecker(database.handle.db, 60_000)
    checkers.push(checker)
    if (shared) {
      const redis = await connectRedis(redisUrl, silent)
      connections.push(redis)
      await checker.shareRevocations(redis, silent)
    }
    return checker
  }

  async function newSession() {
    const email = `revoke-${randomBytes(4).toString('hex')}@example.com`
    const [user] = await database.handle.db.insert(users).values({ email }).returning()
    const { sessionId } = await startSession(database.handle.db, jwt, { id: user!.id, email }, 'email')
    return { sessionId, userId: user!.id }
  }

  it('evicts a session another instance revoked, at once', async () => {
    const [a, b] = [await instance(true), await instance(true)]
    const { sessionId, userId } = await newSession()
    expect(await a.state(sessionId, userId)).toBe('active')
    await b.revoke(sessionId, userId)
    await expect.poll(() => a.state(sessionId, userId), { timeout: 2_000, interval: 20 }).toBe('ended')
  })

  it('ends a session revoked while Redis restarts on an instance that cached it, at once and after', async () => {
    const redis = await startPrivateRedis()
    try {
      const [a, b] = [await instance(true, redis.url), await instance(true, redis.url)]
      const { sessionId, userId } = await newSession()
      expect(await a.state(sessionId, userId)).toBe('active')
      await redis.stop()
      // Announced to no one: Redis is away. A, once it has noticed (its connection's close event), asks the database.
      await expect.poll(() => a.hearsRevocations, { timeout: 5_000, interval: 20 }).toBe(false)
      await b.revoke(sessionId, userId)
      expect(await a.state(sessionId, userId)).toBe('ended')
      await redis.start()
      await expect.poll(() => a.hearsRevocations, { timeout: 10_000, interval: 50 }).toBe(true)
      expect(await a.state(sessionId, userId)).toBe('ended')
    } finally {
      await redis.stop()
    }
  })

  it('without a shared Redis, another instance trusts its cache until the entry expires', async () => {
    const [a, b] = [await instance(false), await instance(false)]
    const { sessionId, userId } = await newSession()
    expect(await a.state(sessionId, userId)).toBe('active')
    await b.revoke(sessionId, userId)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(await a.state(sessionId, userId)).toBe('active')
    expect(await b.state(sessionId, userId)).toBe('ended')
  })
  it('forgets every cached answer when told the database failed over: a session it lost is ended at once', async () => {
    const a = await instance(false)
    const { sessionId, userId } = await newSession()
    expect(await a.state(sessionId, userId)).toBe('active')
    // As a promoted standby that never received the session.
    await database.handle.db.delete(sessions).where(eq(sessions.id, sessionId))
    expect(await a.state(sessionId, userId)).toBe('active')
    a.forgetAll()
    expect(await a.state(sessionId, userId)).toBe('ended')
  })
})
