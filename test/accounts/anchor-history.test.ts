// GET /api/anchors: the caller's own anchors, newest first, in pages joined by an opaque cursor; never another user's,
// never a reservation without its transaction; a cursor the service did not give is a 400 that changes nothing.
import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { encodeCursor } from '../../src/accounts/anchor-history.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { newBody, postRelay, query } from '../relay/relay-helpers.ts'

describe('GET /api/anchors', () => {
  let t: TestApp
  let user: SignedInUser
  let other: SignedInUser
  /** The user's anchors' transaction hashes, oldest first. */
  const made: string[] = []

  beforeAll(async () => {
    t = await createTestApp({ env: { RELAY_MONITOR_INTERVAL_MS: '0', RELAY_WAIT_MS: '5000' } })
    user = await signInTestUser(t)
    other = await signInTestUser(t)
    for (let i = 0; i < 7; i++) {
      const response = await postRelay(t.app, user.headers, newBody())
      expect(response.statusCode).toBe(201)
      made.push(response.json().txHash)
    }
    expect((await postRelay(t.app, other.headers, newBody())).statusCode).toBe(201)
  })
  afterAll(async () => t?.close())

  const page = (headers: Record<string, string>, search = '') =>
    t.app.inject({ method: 'GET', url: `/api/anchors${search}`, headers })

  it('lists the caller’s anchors newest first, each as GET /api/anchors/:compositeHash shows it', async () => {
    const response = await page(user.headers)
    expect(response.statusCode).toBe(200)
    const body = response.json()
    expect(body.nextCursor).toBeNull()
    expect(body.anchors.map((a: { txHash: string }) => a.txHash)).toEqual([...made].reverse())
    const newest = body.anchors[0]
    const single = await t.app.inject({
      method: 'GET',
      url: `/api/anchors/${newest.compositeHash}`,
      headers: user.headers,
    })
    expect(newest).toEqual(single.json())
    expect(Object.keys(newest).sort()).toEqual(
      ['blockNumber', 'compositeHash', 'createdAt', 'previousTxHash', 'status', 'txHash'].sort(),
    )
  })

  it('walks every anchor once in pages, unmoved by anchors made between pages', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    let pages = 0
    do {
      const response = await page(user.headers, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
      expect(response.statusCode).toBe(200)
      const body = response.json()
      expect(body.anchors.length).toBeLessThanOrEqual(3)
      seen.push(...body.anchors.map((a: { txHash: string }) => a.txHash))
      cursor = body.nextCursor
      if (pages++ === 0) {
        // A new anchor after the first page belongs before it, and moves nothing in the pages that follow.
        const fresh = await postRelay(t.app, user.headers, newBody())
        made.push(fresh.json().txHash)
      }
    } while (cursor)
    expect(pages).toBe(3)
    expect(seen).toEqual(made.slice(0, -1).reverse())
  })

  it('shows another user none of them, and a reservation without its transaction to no one', async () => {
    const theirs = (await page(other.headers)).json().anchors
    expect(theirs).toHaveLength(1)
    expect(made).not.toContain(theirs[0].txHash)
    // A reservation as the relayer holds it between reserving and signing (its tx_hash is not a hash yet).
    await query(
      t.database.handle.db,
      sql`UPDATE anchors SET tx_hash = 'unsigned:' || id WHERE tx_hash = ${theirs[0].txHash}`,
    )
    expect((await page(other.headers)).json()).toEqual({ anchors: [], nextCursor: null })
  })

  it('answers 400 for a limit out of range and a cursor it did not give, 401 without a session', async () => {
    const forged = encodeCursor({ createdAt: new Date(), id: '00000000-0000-0000-0000-000000000000' })
    // The probe's cursor of the year 0000, which JavaScript reads and PostgreSQL refused with a 500 (issue 38).
    const yearZero = Buffer.from('0000-01-01T00:00:00.000Z 00000000-0000-0000-0000-000000000000').toString('base64url')
    const cases = [
      '?limit=0',
      '?limit=101',
      '?limit=ten',
      '?cursor=bm90LWEtY3Vyc29y',
      `?cursor=${forged}x`,
      `?cursor=${yearZero}`,
      `?cursor=${'A'.repeat(201)}`,
      '?page=2',
    ]
    for (const search of cases) {
      const response = await page(user.headers, search)
      expect(response.statusCode, search).toBe(400)
      expect(response.json().code, search).toBe('VALIDATION_FAILED')
    }
    // A well-formed cursor is only a position: one the service could have given pages from there.
    expect((await page(user.headers, `?cursor=${forged}`)).statusCode).toBe(200)
    expect((await page(user.headers, '?cursor=&limit=2')).json().anchors).toHaveLength(2)
    expect((await page({})).statusCode).toBe(401)
  })
})
