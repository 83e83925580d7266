import { eq } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { anchors, cloudSignatures, sessions, users } from '../../src/db/schema.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db/database.ts'

describe('database schema', () => {
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase()
  })
  afterAll(() => database.close())

  it('applies defaults to a new user', async () => {
    const [user] = await database.handle.db.insert(users).values({ email: 'defaults@example.com' }).returning()
    expect(user).toMatchObject({ authProvider: 'email', anchorCount: 0, plan: 'free', name: null })
    expect(user!.id).toMatch(/^[0-9a-f-]{36}$/)
    expect(user!.createdAt).toBeInstanceOf(Date)
  })

  it('rejects a second user with the same e-mail', async () => {
    const db = database.handle.db
    await db.insert(users).values({ email: 'unique@example.com' })
    await expect(db.insert(users).values({ email: 'unique@example.com' })).rejects.toThrow()
  })

  it('deletes sessions and library items with their user, and keeps anchors without one', async () => {
    const db = database.handle.db
    const [user] = await db.insert(users).values({ email: 'cascade@example.com' }).returning()
    const userId = user!.id
    await db.insert(sessions).values({ userId, token: 'hash-1', trust: 'email', expiresAt: new Date(Date.now() + 1e6) })
    await db.insert(cloudSignatures).values({
      id: crypto.randomUUID(),
      userId,
      label: 'sig',
      base64Png: 'iVBORw0KGgo=',
      updatedAt: new Date(),
    })
    const txHash = `0x${'ab'.repeat(32)}`
    await db.insert(anchors).values({
      txHash,
      compositeHash: `0x${'cd'.repeat(32)}`,
      previousTxHash: `0x${'00'.repeat(32)}`,
      encryptedPayload: 'payload',
      userId,
      chainId: 31337,
      relayerAddress: '0x0000000000000000000000000000000000000001',
      nonce: 0,
    })
    await db.delete(users).where(eq(users.id, userId))
    expect(await db.select().from(sessions).where(eq(sessions.userId, userId))).toEqual([])
    expect(await db.select().from(cloudSignatures).where(eq(cloudSignatures.userId, userId))).toEqual([])
    const [anchor] = await db.select().from(anchors).where(eq(anchors.txHash, txHash))
    expect(anchor).toMatchObject({ userId: null, status: 'pending' })
  })

  it('refuses two anchors with one composite hash', async () => {
    const db = database.handle.db
    const row = {
      compositeHash: `0x${'ef'.repeat(32)}`,
      previousTxHash: `0x${'00'.repeat(32)}`,
      encryptedPayload: 'payload',
      chainId: 31337,
      relayerAddress: '0x0000000000000000000000000000000000000002',
    }
    await db.insert(anchors).values({ ...row, txHash: `0x${'01'.repeat(32)}`, nonce: 1 })
    await expect(db.insert(anchors).values({ ...row, txHash: `0x${'02'.repeat(32)}`, nonce: 2 })).rejects.toThrow()
  })
})
