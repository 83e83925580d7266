// The service's Ed25519 keys for the `v1a` signature of deliveries: made once and kept in the database, so that every
// instance signs with the same key and receivers verify under the keys GET /.well-known/webhook-keys publishes.
import { createHash, createPrivateKey, type KeyObject } from 'node:crypto'
import { sql } from 'drizzle-orm'
import type { Database } from '../db/database.ts'
import { rows } from '../db/sql-rows.ts'
import { newSigningKeyPair } from './webhook-signature.ts'

export interface PublishedKey {
  kid: string
  alg: 'Ed25519'
  /** `whpk_…` */
  publicKey: string
  notBefore: Date
  notAfter: Date | null
}

/** The key deliveries are signed with now: the newest that has not ended, made on first use. */
export async function currentSigningKey(db: Database): Promise<{ kid: string; key: KeyObject }> {
  const current = await newestKey(db)
  if (current) return current
  const pair = newSigningKeyPair()
  const kid = `whk_${createHash('sha256').update(pair.publicKey).digest('hex').slice(0, 16)}`
  // Instances starting together may each make one: each publishes and signs with the newest, so any of them verifies.
  await db.execute(
    sql`INSERT INTO webhook_signing_keys (kid, private_key, public_key)
        VALUES (${kid}, ${pair.privateKey.toString('base64')}, ${pair.publicKey})`,
  )
  return (await newestKey(db))!
}

export async function publishedKeys(db: Database): Promise<PublishedKey[]> {
  const found = await rows(
    db,
    sql`SELECT kid, public_key, not_before, not_after FROM webhook_signing_keys ORDER BY not_before DESC, kid`,
  )
  return found.map((r) => ({
    kid: String(r.kid),
    alg: 'Ed25519' as const,
    publicKey: String(r.public_key),
    notBefore: new Date(r.not_before as string),
    notAfter: r.not_after === null ? null : new Date(r.not_after as string),
  }))
}

async function newestKey(db: Database): Promise<{ kid: string; key: KeyObject } | undefined> {
  const [row] = await rows(
    db,
    sql`SELECT kid, private_key FROM webhook_signing_keys
        WHERE not_before <= now() AND (not_after IS NULL OR not_after > now())
        ORDER BY not_before DESC, kid LIMIT 1`,
  )
  if (!row) return undefined
  const der = Buffer.from(String(row.private_key), 'base64')
  return { kid: String(row.kid), key: createPrivateKey({ key: der, format: 'der', type: 'pkcs8' }) }
}
