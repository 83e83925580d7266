// Library items for tests: valid by default, timestamps on a clock safely in the past.
import { randomBytes } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Database } from '../../src/db/database.ts'
import type { SignatureItem, SnippetItem } from '../../src/library/library-types.ts'

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

/** Standard base64 of `size` bytes that start like a PNG. */
export function pngBase64(size = 64): string {
  return Buffer.concat([PNG_SIGNATURE, randomBytes(Math.max(0, size - PNG_SIGNATURE.length))]).toString('base64')
}

// A whole day in the past, on a millisecond boundary: every offset used in tests stays behind the server's clock.
const BASE = Math.floor(Date.now() / 1000) * 1000 - 86_400_000

/** ISO timestamp `seconds` after the tests' base instant. */
export function at(seconds: number): string {
  return new Date(BASE + seconds * 1000).toISOString()
}

export function signature(overrides: Partial<SignatureItem> = {}): SignatureItem {
  return {
    id: crypto.randomUUID(),
    label: 'My signature',
    base64Png: pngBase64(),
    updatedAt: at(10),
    createdAt: at(0),
    ...overrides,
  }
}

export function snippet(overrides: Partial<SnippetItem> = {}): SnippetItem {
  return {
    id: crypto.randomUUID(),
    label: 'Address',
    text: '1 Main Street',
    fontSize: 12,
    updatedAt: at(10),
    createdAt: at(0),
    ...overrides,
  }
}

/** Every library row of every user, tombstones included, in a stable order: compared row by row. */
export async function allLibraryRows(db: Database): Promise<unknown[]> {
  const signatures = await db.execute(sql`SELECT 'signature' AS kind, * FROM cloud_signatures ORDER BY user_id, id`)
  const snippets = await db.execute(sql`SELECT 'snippet' AS kind, * FROM cloud_text_snippets ORDER BY user_id, id`)
  return [...(signatures as unknown as { rows: unknown[] }).rows, ...(snippets as unknown as { rows: unknown[] }).rows]
}
