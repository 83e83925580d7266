import { sql } from 'drizzle-orm'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LibraryResponseSchema, SyncResponseSchema } from '../../src/api/routes/library.ts'
import type { LibraryChanges, SnippetItem } from '../../src/library/library-types.ts'
import { createTestApp, type SignedInUser, signInTestUser, type TestApp } from '../helpers/app.ts'
import { allLibraryRows, at, pngBase64, signature, snippet } from './fixtures.ts'

let t: TestApp

beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t?.close())

function sync(testApp: TestApp, user: SignedInUser, body: unknown) {
  return testApp.app.inject({ method: 'PUT', url: '/api/library/sync', headers: user.headers, payload: body as object })
}

async function library(testApp: TestApp, user: SignedInUser) {
  const response = await testApp.app.inject({ url: '/api/library', headers: user.headers })
  expect(response.statusCode).toBe(200)
  return LibraryResponseSchema.parse(response.json())
}

/** The signature series of library_sync_changes_total in /metrics (0 for a series not yet created). */
async function changeCounts() {
  const metrics = (await t.app.inject({ url: '/metrics' })).body
  const count = (op: string, result: string) =>
    Number(
      metrics.match(
        new RegExp(`library_sync_changes_total\\{kind="signature",op="${op}",result="${result}"\\} (\\d+)`),
      )?.[1] ?? 0,
    )
  return {
    upsertApplied: count('upsert', 'applied'),
    upsertStale: count('upsert', 'stale'),
    deleteApplied: count('delete', 'applied'),
  }
}

async function synced(testApp: TestApp, user: SignedInUser, body: LibraryChanges) {
  const response = await sync(testApp, user, body)
  expect(response.statusCode, response.body.slice(0, 500)).toBe(200)
  return SyncResponseSchema.parse(response.json())
}

describe('library routes', () => {
  it('answers 401 without a token on every route', async () => {
    for (const [method, url] of [
      ['GET', '/api/library'],
      ['PUT', '/api/library/sync'],
      ['DELETE', '/api/library'],
      ['GET', '/api/library/exists'],
    ] as const) {
      // An invalid body too: the token is checked before the body is read.
      const response = await t.app.inject({ method, url, ...(method === 'PUT' && { payload: { bad: 1 } }) })
      expect(response.statusCode, url).toBe(401)
      expect(response.json().code).toBe('UNAUTHENTICATED')
    }
  })

  it('starts empty', async () => {
    const user = await signInTestUser(t)
    expect(await library(t, user)).toEqual({ signatures: [], snippets: [] })
    const exists = await t.app.inject({ url: '/api/library/exists', headers: user.headers })
    expect(exists.json()).toEqual({ exists: false, signatures: 0, snippets: 0, updatedAt: null })
  })

  it('stores items byte for byte and answers them from GET, sync and exists', async () => {
    const user = await signInTestUser(t)
    const sig = signature({ label: 'Ünïcödé "quoted" \\ \n\t😀', createdAt: at(1), updatedAt: at(2) })
    const snip = snippet({ text: 'Line 1\nLine 2 </script>', fontSize: 12.5, createdAt: at(0), updatedAt: at(3) })
    const response = await synced(t, user, { signatures: { upsert: [sig] }, snippets: { upsert: [snip] } })
    expect(response).toEqual({ signatures: [sig], snippets: [snip], skipped: [] })
    expect(await library(t, user)).toEqual({ signatures: [sig], snippets: [snip] })
    const exists = await t.app.inject({ url: '/api/library/exists', headers: user.headers })
    expect(exists.json()).toEqual({ exists: true, signatures: 1, snippets: 1, updatedAt: at(3) })
  })

  it('answers ids in lower case and treats an upper-case id as the same item', async () => {
    const user = await signInTestUser(t)
    const item = snippet()
    await synced(t, user, { snippets: { upsert: [{ ...item, id: item.id.toUpperCase() }] } })
    const response = await synced(t, user, { snippets: { upsert: [{ ...item, text: 'edited', updatedAt: at(20) }] } })
    expect(response.snippets).toEqual([{ ...item, text: 'edited', updatedAt: at(20) }])
  })

  describe('two devices, last write wins', () => {
    it('keeps A edit over an older B edit, lets a newer B delete win, and skips A later stale upsert', async () => {
      const before = await changeCounts()
      const user = await signInTestUser(t)
      const original = signature({ label: 'original', updatedAt: at(10) })
      await synced(t, user, { signatures: { upsert: [original] } })

      const editA = { ...original, label: 'edited on A', updatedAt: at(30) }
      expect((await synced(t, user, { signatures: { upsert: [editA] } })).skipped).toEqual([])
      const editB = { ...original, label: 'edited on B', updatedAt: at(20) }
      const fromB = await synced(t, user, { signatures: { upsert: [editB] } })
      expect(fromB.skipped).toEqual([{ kind: 'signature', id: original.id, op: 'upsert', reason: 'stale' }])
      expect(fromB.signatures).toEqual([editA])

      const deleteB = await synced(t, user, { signatures: { delete: [{ id: original.id, deletedAt: at(40) }] } })
      expect(deleteB).toEqual({ signatures: [], snippets: [], skipped: [] })

      const staleA = { ...original, label: 'edited again on A', updatedAt: at(35) }
      const fromA = await synced(t, user, { signatures: { upsert: [staleA] } })
      expect(fromA.skipped).toEqual([{ kind: 'signature', id: original.id, op: 'upsert', reason: 'stale' }])
      expect(await library(t, user)).toEqual({ signatures: [], snippets: [] })

      // Each change counted once: applied, or stale.
      const after = await changeCounts()
      expect(after.upsertApplied - before.upsertApplied).toBe(2)
      expect(after.upsertStale - before.upsertStale).toBe(2)
      expect(after.deleteApplied - before.deleteApplied).toBe(1)

      // The tombstone holds the clock, not the content.
      const [row] = await rows(
        sql`SELECT label, base64_png, deleted_at FROM cloud_signatures WHERE id = ${original.id}`,
      )
      expect(row).toMatchObject({ label: '', base64_png: '' })
    })

    it('skips a deletion older than the live item', async () => {
      const user = await signInTestUser(t)
      const item = snippet({ updatedAt: at(50) })
      await synced(t, user, { snippets: { upsert: [item] } })
      const response = await synced(t, user, { snippets: { delete: [{ id: item.id, deletedAt: at(49) }] } })
      expect(response.skipped).toEqual([{ kind: 'snippet', id: item.id, op: 'delete', reason: 'stale' }])
      expect(response.snippets).toEqual([item])
    })

    it('keeps a tombstone for an unknown id, so an older upsert arriving later cannot create the item', async () => {
      const user = await signInTestUser(t)
      const item = snippet({ updatedAt: at(10) })
      expect((await synced(t, user, { snippets: { delete: [{ id: item.id, deletedAt: at(20) }] } })).skipped).toEqual(
        [],
      )
      const late = await synced(t, user, { snippets: { upsert: [item] } })
      expect(late.skipped).toEqual([{ kind: 'snippet', id: item.id, op: 'upsert', reason: 'stale' }])
      const newer = { ...item, text: 'recreated', updatedAt: at(21) }
      expect(await synced(t, user, { snippets: { upsert: [newer] } })).toEqual({
        signatures: [],
        snippets: [newer],
        skipped: [],
      })
    })

    it('on equal clocks keeps the server copy against an upsert and lets a deletion win', async () => {
      const user = await signInTestUser(t)
      const item = signature({ updatedAt: at(10) })
      await synced(t, user, { signatures: { upsert: [item] } })
      const rival = await synced(t, user, { signatures: { upsert: [{ ...item, label: 'rival' }] } })
      expect(rival.skipped).toHaveLength(1)
      expect(rival.signatures).toEqual([item])
      const deletion = await synced(t, user, { signatures: { delete: [{ id: item.id, deletedAt: at(10) }] } })
      expect(deletion).toEqual({ signatures: [], snippets: [], skipped: [] })
    })

    it('treats a repeated sync as a no-op, not as stale', async () => {
      const user = await signInTestUser(t)
      const body = {
        signatures: { upsert: [signature()], delete: [{ id: crypto.randomUUID(), deletedAt: at(5) }] },
        snippets: { upsert: [snippet(), snippet()] },
      }
      const first = await synced(t, user, body)
      const before = await allLibraryRows(t.database.handle.db)
      const second = await synced(t, user, body)
      expect(second).toEqual(first)
      expect(second.skipped).toEqual([])
      expect(await allLibraryRows(t.database.handle.db)).toEqual(before)
    })

    it('resolves duplicate ids within one request by the newest timestamp', async () => {
      const user = await signInTestUser(t)
      const id = crypto.randomUUID()
      const older = snippet({ id, text: 'older', updatedAt: at(1) })
      const newer = snippet({ id, text: 'newer', updatedAt: at(3) })
      const response = await synced(t, user, {
        snippets: { upsert: [newer, older], delete: [{ id, deletedAt: at(2) }] },
      })
      expect(response.snippets).toEqual([newer])
      expect(response.skipped).toEqual([
        { kind: 'snippet', id, op: 'upsert', reason: 'stale' },
        { kind: 'snippet', id, op: 'delete', reason: 'stale' },
      ])
    })
  })

  describe('validation', () => {
    it('rejects one invalid item among 100 valid ones with its path, and changes nothing', async () => {
      const user = await signInTestUser(t)
      const existing = signature({ label: 'kept' })
      await synced(t, user, { signatures: { upsert: [existing] } })
      const before = await allLibraryRows(t.database.handle.db)

      const items = Array.from({ length: 101 }, () => signature({ updatedAt: at(100) }))
      items[37] = { ...items[37]!, base64Png: Buffer.from('GIF89a, not a PNG at all').toString('base64') }
      items.push({ ...existing, label: 'changed', updatedAt: at(100) })
      const response = await sync(t, user, {
        signatures: { upsert: items, delete: [{ id: existing.id, deletedAt: at(200) }] },
        snippets: { upsert: Array.from({ length: 50 }, () => snippet()) },
      })
      expect(response.statusCode).toBe(400)
      expect(response.json()).toMatchObject({
        code: 'VALIDATION_FAILED',
        errors: [{ path: 'signatures.upsert.37.base64Png', message: 'is not a PNG image (missing PNG signature)' }],
      })
      expect(await allLibraryRows(t.database.handle.db)).toEqual(before)
    })

    it('lists every failing path at once', async () => {
      const user = await signInTestUser(t)
      const future = new Date(Date.now() + 3_600_000).toISOString()
      const response = await sync(t, user, {
        signatures: {
          upsert: [
            signature({ id: 'not-a-uuid' }),
            signature({ label: 'x'.repeat(201) }),
            signature({ base64Png: pngBase64(256 * 1024 + 1) }),
            signature({ base64Png: pngBase64(40).replaceAll('+', '-').replaceAll('/', '_').replace(/=+$/, '') }),
            signature({ updatedAt: future }),
          ],
          delete: [{ id: crypto.randomUUID(), deletedAt: '2025-01-01T00:00:00Z' }],
        },
        snippets: {
          upsert: [
            snippet({ text: 't'.repeat(4001) }),
            snippet({ fontSize: 3.9 }),
            snippet({ fontSize: 144.1 }),
            snippet({ label: 'nul\u0000' }),
          ],
        },
      })
      expect(response.statusCode).toBe(400)
      const paths = (response.json().errors as { path: string }[]).map((error) => error.path).sort()
      expect(paths).toEqual(
        [
          'signatures.upsert.0.id',
          'signatures.upsert.1.label',
          'signatures.upsert.2.base64Png',
          'signatures.upsert.3.base64Png',
          'signatures.upsert.4.updatedAt',
          'signatures.delete.0.deletedAt',
          'snippets.upsert.0.text',
          'snippets.upsert.1.fontSize',
          'snippets.upsert.2.fontSize',
          'snippets.upsert.3.label',
        ].sort(),
      )
      expect(await library(t, user)).toEqual({ signatures: [], snippets: [] })
    })

    it('accepts the limits themselves: 256 KiB PNG, 200-character label, 4,000-character text, font 4 and 144', async () => {
      const user = await signInTestUser(t)
      const sig = signature({ base64Png: pngBase64(256 * 1024), label: 'é'.repeat(200) })
      const small = snippet({ text: '😀'.repeat(4000), fontSize: 4, createdAt: at(0) })
      const large = snippet({ fontSize: 144, createdAt: at(1) })
      const response = await synced(t, user, { signatures: { upsert: [sig] }, snippets: { upsert: [small, large] } })
      expect(response).toEqual({ signatures: [sig], snippets: [small, large], skipped: [] })
    })

    it('refuses unknown top-level keys instead of ignoring them', async () => {
      const user = await signInTestUser(t)
      const response = await sync(t, user, { signature: { upsert: [signature()] } })
      expect(response.statusCode).toBe(400)
      expect(response.json().code).toBe('VALIDATION_FAILED')
    })
  })

  it('rolls back everything when the database fails mid-transaction', async () => {
    const user = await signInTestUser(t)
    const existing = snippet({ label: 'kept' })
    await synced(t, user, { snippets: { upsert: [existing] } })
    const db = t.database.handle.db
    // A real failure in the real database: the snippet statement runs after the signatures were written.
    await db.execute(sql`CREATE FUNCTION library_test_fail() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.label = 'explode' THEN RAISE EXCEPTION 'injected failure'; END IF;
        RETURN NEW;
      END $$`)
    await db.execute(sql`CREATE TRIGGER library_test_fail BEFORE INSERT OR UPDATE ON cloud_text_snippets
      FOR EACH ROW EXECUTE FUNCTION library_test_fail()`)
    try {
      const before = await allLibraryRows(db)
      const response = await sync(t, user, {
        signatures: { upsert: [signature(), signature()] },
        snippets: { upsert: [{ ...existing, text: 'changed', updatedAt: at(99) }, snippet({ label: 'explode' })] },
      })
      expect(response.statusCode).toBe(500)
      expect(response.json()).toMatchObject({ code: 'INTERNAL_ERROR' })
      expect(response.body).not.toMatch(/injected|cloud_|trigger/)
      expect(await allLibraryRows(db)).toEqual(before)
    } finally {
      await db.execute(sql`DROP TRIGGER library_test_fail ON cloud_text_snippets`)
      await db.execute(sql`DROP FUNCTION library_test_fail()`)
    }
  })

  it('gives a consistent result equal to per-item last write wins under concurrent syncs', async () => {
    const user = await signInTestUser(t)
    const ids = Array.from({ length: 12 }, () => crypto.randomUUID())
    let seed = 7
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648
      return seed / 2_147_483_648
    }
    type Change = { op: 'upsert'; item: SnippetItem } | { op: 'delete'; id: string; clock: number }
    const all: Change[] = []
    const requests: LibraryChanges[] = []
    for (let device = 0; device < 6; device++) {
      const upsert: SnippetItem[] = []
      const deletions: { id: string; deletedAt: string }[] = []
      for (const id of ids) {
        if (random() < 0.3) continue
        // Distinct clocks per change: with ties, the outcome would depend on arrival order by design.
        const clock = 1000 + device + 6 * Math.floor(random() * 1000)
        if (random() < 0.25) {
          deletions.push({ id, deletedAt: at(clock) })
          all.push({ op: 'delete', id, clock })
        } else {
          const item = snippet({ id, text: `device ${device}`, fontSize: 4 + device, updatedAt: at(clock) })
          upsert.push(item)
          all.push({ op: 'upsert', item })
        }
      }
      requests.push({ snippets: { upsert, delete: deletions } })
    }
    const responses = await Promise.all(requests.map((body) => sync(t, user, body)))
    expect(responses.map((response) => response.statusCode)).toEqual(requests.map(() => 200))

    const expected = new Map<string, { clock: number; item: SnippetItem | undefined }>()
    for (const change of all) {
      const id = change.op === 'upsert' ? change.item.id : change.id
      const clock = change.op === 'upsert' ? Date.parse(change.item.updatedAt) : Date.parse(at(change.clock))
      const current = expected.get(id)
      if (current === undefined || clock > current.clock) {
        expected.set(id, { clock, item: change.op === 'upsert' ? change.item : undefined })
      }
    }
    const live = [...expected.values()].flatMap((entry) => (entry.item ? [entry.item] : []))
    const actual = await library(t, user)
    const byId = (a: { id: string }, b: { id: string }) => a.id.localeCompare(b.id)
    expect([...actual.snippets].sort(byId)).toEqual([...live].sort(byId))
    // Tombstones hold the newest deletion clock.
    const tombstones = await rows(
      sql`SELECT id, deleted_at FROM cloud_text_snippets WHERE user_id = ${user.id} AND deleted_at IS NOT NULL`,
    )
    expect(tombstones.map((row) => (row as { id: string }).id).sort()).toEqual(
      [...expected.entries()]
        .filter(([, entry]) => entry.item === undefined)
        .map(([id]) => id)
        .sort(),
    )
  })

  it('cannot read or touch another user items, whatever ids are sent', async () => {
    const owner = await signInTestUser(t)
    const intruder = await signInTestUser(t)
    const sig = signature()
    const snip = snippet()
    await synced(t, owner, { signatures: { upsert: [sig] }, snippets: { upsert: [snip] } })
    const ownerRows = await rows(sql`SELECT * FROM cloud_signatures WHERE user_id = ${owner.id}`)

    const response = await synced(t, intruder, {
      signatures: { upsert: [{ ...sig, label: 'hijacked', updatedAt: at(500) }] },
      snippets: { delete: [{ id: snip.id, deletedAt: at(500) }] },
    })
    expect(response.skipped).toEqual([])
    expect(response.signatures).toEqual([{ ...sig, label: 'hijacked', updatedAt: at(500) }])
    expect(await library(t, owner)).toEqual({ signatures: [sig], snippets: [snip] })
    expect(await rows(sql`SELECT * FROM cloud_signatures WHERE user_id = ${owner.id}`)).toEqual(ownerRows)

    const cleared = await t.app.inject({ method: 'DELETE', url: '/api/library', headers: intruder.headers })
    expect(cleared.statusCode).toBe(204)
    expect(await library(t, owner)).toEqual({ signatures: [sig], snippets: [snip] })
  })

  describe('DELETE /api/library', () => {
    it('removes everything, deletions included, so exists answers false', async () => {
      const user = await signInTestUser(t)
      const item = signature({ updatedAt: at(10) })
      await synced(t, user, {
        signatures: { upsert: [item], delete: [{ id: crypto.randomUUID(), deletedAt: at(11) }] },
        snippets: { upsert: [snippet()] },
      })
      const response = await t.app.inject({ method: 'DELETE', url: '/api/library', headers: user.headers })
      expect(response.statusCode).toBe(204)
      expect(response.body).toBe('')
      const exists = await t.app.inject({ url: '/api/library/exists', headers: user.headers })
      expect(exists.json()).toEqual({ exists: false, signatures: 0, snippets: 0, updatedAt: null })
      const left = await rows(
        sql`SELECT (SELECT count(*)::int FROM cloud_signatures WHERE user_id = ${user.id}) +
                   (SELECT count(*)::int FROM cloud_text_snippets WHERE user_id = ${user.id}) AS n`,
      )
      expect(left).toEqual([{ n: 0 }])
    })
  })
})

describe('library limits', () => {
  let limited: TestApp
  beforeAll(async () => {
    limited = await createTestApp({
      testChain: t.testChain,
      env: {
        LIBRARY_MAX_SIGNATURES: '3',
        LIBRARY_MAX_SNIPPETS: '2',
        LIBRARY_MAX_TOMBSTONES: '3',
        LIBRARY_MAX_PNG_BYTES: '1024',
        LIBRARY_BODY_LIMIT_BYTES: '65536',
        LIBRARY_CLOCK_SKEW_MS: '0',
      },
    })
  })
  afterAll(() => limited?.close())

  it('refuses a sync that would grow past the per-user item limit with 409 and changes nothing', async () => {
    const user = await signInTestUser(limited)
    await synced(limited, user, {
      signatures: { upsert: [signature(), signature()] },
      snippets: { upsert: [snippet()] },
    })
    const before = await allLibraryRows(limited.database.handle.db)
    const response = await sync(limited, user, {
      signatures: { upsert: [signature(), signature()] },
      snippets: { upsert: [snippet(), snippet()] },
    })
    expect(response.statusCode).toBe(409)
    expect(response.json()).toMatchObject({
      code: 'LIBRARY_LIMIT_EXCEEDED',
      errors: [
        { path: 'signatures.upsert', message: 'the library would hold 4 signatures; at most 3 allowed' },
        { path: 'snippets.upsert', message: 'the library would hold 3 snippets; at most 2 allowed' },
      ],
    })
    expect(await allLibraryRows(limited.database.handle.db)).toEqual(before)
  })

  it('counts concurrent syncs of one user together: the limit holds', async () => {
    const user = await signInTestUser(limited)
    const responses = await Promise.all(
      [0, 1, 2].map(() => sync(limited, user, { signatures: { upsert: [signature(), signature()] } })),
    )
    expect(responses.map((response) => response.statusCode).sort()).toEqual([200, 409, 409])
    const live = await rows(
      sql`SELECT count(*)::int AS n FROM cloud_signatures WHERE user_id = ${user.id} AND deleted_at IS NULL`,
      limited,
    )
    expect(live).toEqual([{ n: 2 }])
  })

  it('allows edits and swaps at the limit: deletions in the same sync make room', async () => {
    const user = await signInTestUser(limited)
    const full = [signature(), signature(), signature()]
    await synced(limited, user, { signatures: { upsert: full } })
    const swapped = signature({ createdAt: at(5) })
    const response = await synced(limited, user, {
      signatures: {
        upsert: [{ ...full[0]!, label: 'edited', updatedAt: at(20) }, swapped],
        delete: [{ id: full[1]!.id, deletedAt: at(20) }],
      },
    })
    expect(response.signatures.map((item) => item.id).sort()).toEqual([full[0]!.id, full[2]!.id, swapped.id].sort())
  })

  it('refuses more items in one list than a user may hold, before touching the database', async () => {
    const user = await signInTestUser(limited)
    const response = await sync(limited, user, { snippets: { upsert: [snippet(), snippet(), snippet()] } })
    expect(response.statusCode).toBe(400)
    expect(response.json().errors).toEqual([expect.objectContaining({ path: 'snippets.upsert' })])
  })

  it('keeps only the newest tombstones beyond the limit', async () => {
    const user = await signInTestUser(limited)
    const deletions = [1, 2, 3].map((second) => ({ id: crypto.randomUUID(), deletedAt: at(second) }))
    await synced(limited, user, { signatures: { delete: deletions } })
    const newest = [4, 5].map((second) => ({ id: crypto.randomUUID(), deletedAt: at(second) }))
    await synced(limited, user, { signatures: { delete: newest } })
    const kept = await rows(
      sql`SELECT id FROM cloud_signatures WHERE user_id = ${user.id} ORDER BY deleted_at`,
      limited,
    )
    expect(kept.map((row) => (row as { id: string }).id)).toEqual([deletions[2]!.id, newest[0]!.id, newest[1]!.id])
  })

  it('applies the configured PNG size, clock skew and body limits', async () => {
    const user = await signInTestUser(limited)
    const tooBig = await sync(limited, user, { signatures: { upsert: [signature({ base64Png: pngBase64(1025) })] } })
    expect(tooBig.json().errors).toEqual([
      { path: 'signatures.upsert.0.base64Png', message: 'decodes to 1025 bytes; at most 1024 allowed' },
    ])
    const ahead = new Date(Date.now() + 60_000).toISOString()
    const future = await sync(limited, user, { snippets: { delete: [{ id: crypto.randomUUID(), deletedAt: ahead }] } })
    expect(future.statusCode).toBe(400)
    expect(future.json().errors[0].path).toBe('snippets.delete.0.deletedAt')
    const huge = await sync(limited, user, { snippets: { upsert: [snippet({ text: 'x'.repeat(70_000) })] } })
    expect(huge.statusCode).toBe(413)
    expect(huge.json().code).toBe('PAYLOAD_TOO_LARGE')
  })
})

async function rows(statement: ReturnType<typeof sql>, testApp = t): Promise<unknown[]> {
  return ((await testApp.database.handle.db.execute(statement)) as unknown as { rows: unknown[] }).rows
}
