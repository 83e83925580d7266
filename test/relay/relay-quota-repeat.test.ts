// A repeat of an existing anchor is answered whatever the quota: only a new anchor counts (issue 14, point 10).
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { count, newBody, postRelay, randomPayload } from './relay-helpers.ts'

describe('POST /api/relay once the monthly quota is used up', () => {
  let t: TestApp
  let user: SignedInUser
  beforeAll(async () => {
    t = await createTestApp({ env: { PLANS: 'free:3', RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
    user = await signInTestUser(t)
  })
  afterAll(async () => t?.close())

  it('answers a repeat with 200, other data with 409, and only a new anchor with 429', async () => {
    const bodies = [newBody(), newBody(), newBody()]
    for (const body of bodies) expect((await postRelay(t.app, user.headers, body)).statusCode).toBe(201)
    const last = bodies[2]!
    const anchorsBefore = await count(t.database.handle.db, 'anchors')

    const repeat = await postRelay(t.app, user.headers, last)
    expect(repeat.statusCode).toBe(200)
    expect(repeat.json()).toMatchObject({ compositeHash: last.compositeHash, status: 'confirmed' })

    const conflicting = await postRelay(t.app, user.headers, { ...last, encryptedPayload: randomPayload() })
    expect(conflicting.statusCode).toBe(409)
    expect(conflicting.json().code).toBe('ANCHOR_CONFLICT')

    const other = await signInTestUser(t)
    const otherUsers = await postRelay(t.app, other.headers, last)
    expect(otherUsers.statusCode).toBe(409)

    const fresh = await postRelay(t.app, user.headers, newBody())
    expect(fresh.statusCode).toBe(429)
    expect(fresh.json()).toMatchObject({ code: 'QUOTA_EXCEEDED', limit: 3, used: 3 })
    expect(await count(t.database.handle.db, 'anchors')).toBe(anchorsBefore)
  })
})
